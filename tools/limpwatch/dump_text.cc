// `limpwatch dump` as aligned text sections.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "dump.h"
#include "format.h"
#include "io_view.h"
#include "peer_view.h"
#include "score_view.h"
#include "sample_profile.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// "key   value" lines with the values in one column.
std::string RenderFields(const Fields& fields) {
  size_t width = 0;
  for (const auto& [key, value] : fields) width = std::max(width, key.size());
  std::string out;
  for (const auto& [key, value] : fields) {
    out += key;
    out.append(width - key.size() + 2, ' ');
    out += Printable(value);
    out += '\n';
  }
  return out;
}

std::string Ns(double ns) { return FormatFixed(ns, 0); }

std::string HeaderSection(const DumpData& dump) {
  const shm::Snapshot& s = dump.snapshot;
  std::string taken = FormatLocalTime(s.taken_realtime_ns, true) + "  (" + std::to_string(s.attempts) +
                      (s.attempts == 1 ? " attempt, " : " attempts, ") +
                      (s.consistent ? "consistent" : "INCONSISTENT: thread retirements kept racing") + ")";
  Fields fields = {
      {"segment", s.object_name},
      {"name", s.name.empty() ? "-" : s.name},
      {"program", s.program},
      {"pid", std::to_string(s.pid)},
      {"parent pid", std::to_string(s.parent_pid)},
      {"liveness", shm::LivenessName(s.liveness)},
      {"version", std::to_string(s.version_major) + "." + std::to_string(s.version_minor)},
      {"clock", std::string(ClockSourceName(s.clock_source)) + ", " + FormatNumber(s.ns_per_tick) + " ns/tick"},
      {"geometry", std::to_string(s.max_functions) + " functions, " + std::to_string(s.max_threads) +
                       " threads, stack depth " + std::to_string(s.stack_depth)},
      {"segment size", FormatBytes(s.segment_size) + " (" + std::to_string(s.segment_size) + " bytes)"},
      {"created", FormatLocalTime(dump.created_realtime_ns, true)},
      {"taken at", taken},
  };
  if (s.service_heartbeat_ns != 0) {
    fields.push_back({"service heartbeat", FormatLocalTime(s.service_heartbeat_ns, true)});
  }
  return RenderFields(fields);
}

std::string FunctionSection(const shm::Snapshot& s) {
  std::string out = "FUNCTIONS (" + std::to_string(s.functions.size()) + " known)\n";
  Table table({{"ID", Align::kRight},
               {"NAME"},
               {"HASH"},
               {"ADDRESS", Align::kRight},
               {"STATE"},
               {"CALLS", Align::kRight},
               {"SELF ns", Align::kRight},
               {"TOTAL ns", Align::kRight},
               {"AVG SELF ns", Align::kRight}});
  for (const auto& function : s.functions) {
    table.AddRow({std::to_string(function.id), function.name, FormatHex16(function.name_hash),
                  FormatAddress(function.address), SymbolStateName(function.state),
                  std::to_string(function.counters.calls), Ns(s.TicksToNs(function.counters.self_ticks)),
                  Ns(s.TicksToNs(function.counters.total_ticks)), Ns(AverageSelfNs(s, function))});
  }
  return out + table.Render();
}

std::string ThreadSection(const shm::Snapshot& s) {
  std::string out = "THREADS (" + std::to_string(s.threads.size()) + " live, " + std::to_string(s.retired_threads) +
                    " retired)\n";
  Table threads({{"SLOT", Align::kRight},
                 {"TID", Align::kRight},
                 {"GENERATION", Align::kRight},
                 {"DEPTH", Align::kRight},
                 {"CALLS", Align::kRight},
                 {"OVERFLOWED", Align::kRight},
                 {"UNMATCHED", Align::kRight},
                 {"RESYNCED", Align::kRight},
                 {"UNTRACKED", Align::kRight}});
  Table frames({{"SLOT", Align::kRight},
                {"TID", Align::kRight},
                {"LEVEL", Align::kRight},
                {"ELAPSED ms", Align::kRight},
                {"FLAGS"},
                {"FUNCTION"}});
  size_t unstored = 0;
  for (const auto& thread : s.threads) {
    threads.AddRow({std::to_string(thread.slot), std::to_string(thread.tid), std::to_string(thread.generation),
                    std::to_string(thread.depth), std::to_string(thread.calls),
                    std::to_string(thread.diagnostics.overflowed_calls),
                    std::to_string(thread.diagnostics.unmatched_exits),
                    std::to_string(thread.diagnostics.resynced_frames),
                    std::to_string(thread.diagnostics.untracked_calls)});
    for (size_t level = 0; level < thread.open_frames.size(); ++level) {
      const shm::OpenFrame& frame = thread.open_frames[level];
      frames.AddRow({std::to_string(thread.slot), std::to_string(thread.tid), std::to_string(level),
                     FormatFixed(OpenFrameElapsedMs(s, frame), 3), frame.inherited ? "inherited" : "-",
                     OpenFrameFunctionName(s, frame)});
    }
    if (thread.depth > thread.open_frames.size()) unstored += thread.depth - thread.open_frames.size();
  }
  out += threads.Render();
  out += "\nOPEN FRAMES (bottom first; inherited: entered before fork, never counted)\n";
  out += frames.Render();
  if (unstored != 0) out += "(" + std::to_string(unstored) + " frames deeper than the stack depth are not stored)\n";
  return out;
}

std::string CountersSection(const shm::Snapshot& s) {
  std::string out = "PROCESS COUNTERS\n";
  out += RenderFields({
      {"functions registered", std::to_string(s.functions_registered)},
      {"function table full", std::to_string(s.function_table_full)},
      {"function ids wasted", std::to_string(s.function_ids_wasted)},
      {"threads started", std::to_string(s.threads_started)},
      {"threads retired", std::to_string(s.threads_retired)},
      {"threads without slot", std::to_string(s.threads_without_slot)},
      {"calls without slot", std::to_string(s.calls_without_slot)},
      {"forks followed", std::to_string(s.forks_followed)},
      {"calls during hooks (signal handlers)", std::to_string(s.calls_during_hooks)},
      {"  of which lost (not registered yet)", std::to_string(s.calls_during_hooks_lost)},
  });
  out += "\nDIAGNOSTICS (all threads, live and retired)\n";
  out += RenderFields({
      {"overflowed calls", std::to_string(s.diagnostics.overflowed_calls)},
      {"unmatched exits", std::to_string(s.diagnostics.unmatched_exits)},
      {"resynced frames", std::to_string(s.diagnostics.resynced_frames)},
      {"untracked calls", std::to_string(s.diagnostics.untracked_calls)},
  });
  out += "\nREQUEST FLOWS (limpwatch flows NAME lists their categories)\n";
  if (!s.flows.present) return out + "  none recorded (LIMPWATCH_FLOW_SAMPLE=0)\n";
  out += RenderFields({
      {"sampled", "1 in " + std::to_string(s.flows.sample_every) + " root calls"},
      {"ring per thread", std::to_string(s.flows.events_per_thread) + " events"},
      {"flows published", std::to_string(s.flows.published)},
      {"  of which cut at the ring's bound", std::to_string(s.flows.cut)},
      {"flows abandoned (thread exited, root lost)", std::to_string(s.flows.abandoned)},
  });
  return out;
}

}  // namespace

std::string RenderDumpText(const DumpData& dump) {
  const shm::Snapshot& s = dump.snapshot;
  return HeaderSection(dump) + "\n" + FunctionSection(s) + "\n" + ThreadSection(s) + "\n" + CountersSection(s) +
         "\nSAMPLES (CPU time per function, since the start)\n" + RenderSampleProfileText(BuildSampleProfile(s), 0) +
         "\n" + RenderIoTotalsText(s, SegmentLifetimeSeconds(dump)) + "\n" + RenderNodeMetricsText(s.node_metrics) +
         "\n" + RenderAnalyzerHealthText(s.analyzer_health, s.analyzer_shedding) + "\n" +
         RenderScoreStatusText(s.score_status) + "\n" +
         RenderPeerStatusText(s.peer_status, s.taken_realtime_ns / 1000000);
}

}  // namespace limpwatch::cli
