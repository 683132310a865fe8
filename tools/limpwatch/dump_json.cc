// `limpwatch dump --json`: the snapshot as one JSON object.
//
// Counters are given both in ticks (exact integers, what the segment holds)
// and in ns (converted with ns_per_tick), so scripts can check either.
#include <cmath>
#include <string>

#include "dump.h"
#include "format.h"
#include "io_view.h"
#include "peer_view.h"
#include "score_view.h"
#include "json_writer.h"
#include "sample_profile.h"

namespace limpwatch::cli {
namespace {

uint64_t RoundNs(double ns) { return ns > 0 && std::isfinite(ns) ? static_cast<uint64_t>(std::llround(ns)) : 0; }

void WriteDiagnostics(JsonWriter* json, std::string_view key, const shm::DiagnosticValues& diagnostics) {
  json->Key(key);
  json->BeginObject();
  json->Field("overflowed_calls", diagnostics.overflowed_calls);
  json->Field("unmatched_exits", diagnostics.unmatched_exits);
  json->Field("resynced_frames", diagnostics.resynced_frames);
  json->Field("untracked_calls", diagnostics.untracked_calls);
  json->EndObject();
}

void WriteHeader(JsonWriter* json, const DumpData& dump) {
  const shm::Snapshot& s = dump.snapshot;
  json->Field("object", s.object_name);
  json->Field("name", s.name);
  json->Field("program", s.program);
  json->Field("pid", s.pid);
  json->Field("parent_pid", s.parent_pid);
  json->Field("liveness", shm::LivenessName(s.liveness));
  json->Field("version", std::to_string(s.version_major) + "." + std::to_string(s.version_minor));
  json->Field("clock_source", ClockSourceName(s.clock_source));
  json->Field("ns_per_tick", s.ns_per_tick);
  json->Key("geometry");
  json->BeginObject();
  json->Field("max_functions", s.max_functions);
  json->Field("max_threads", s.max_threads);
  json->Field("stack_depth", s.stack_depth);
  json->EndObject();
  json->Field("segment_size", s.segment_size);
  json->Field("object_size", dump.object_size);
  json->Field("created_ns", dump.created_realtime_ns);
  json->FieldOrNull("created", FormatIsoTime(dump.created_realtime_ns));
  json->Field("taken_at_ns", s.taken_realtime_ns);
  json->FieldOrNull("taken_at", FormatIsoTime(s.taken_realtime_ns));
  json->Field("taken_ticks", s.taken_ticks);
  json->Field("attempts", s.attempts);
  json->Field("consistent", s.consistent);
  json->Field("service_heartbeat_ns", s.service_heartbeat_ns);
}

void WriteFunctions(JsonWriter* json, const shm::Snapshot& s) {
  json->Key("functions");
  json->BeginArray();
  for (const auto& function : s.functions) {
    json->BeginObject();
    json->Field("id", function.id);
    json->Field("name", function.name);
    json->Field("name_hash", FormatHex16(function.name_hash));
    json->Field("address", FormatAddress(function.address));
    json->Field("state", SymbolStateName(function.state));
    json->Field("calls", function.counters.calls);
    json->Field("self_ticks", function.counters.self_ticks);
    json->Field("total_ticks", function.counters.total_ticks);
    json->Field("self_ns", RoundNs(s.TicksToNs(function.counters.self_ticks)));
    json->Field("total_ns", RoundNs(s.TicksToNs(function.counters.total_ticks)));
    json->Field("avg_self_ns", AverageSelfNs(s, function));
    json->EndObject();
  }
  json->EndArray();
}

void WriteThreads(JsonWriter* json, const shm::Snapshot& s) {
  json->Key("threads");
  json->BeginArray();
  for (const auto& thread : s.threads) {
    json->BeginObject();
    json->Field("slot", thread.slot);
    json->Field("tid", thread.tid);
    json->Field("generation", thread.generation);
    json->Field("depth", thread.depth);
    json->Field("calls", thread.calls);
    WriteDiagnostics(json, "diagnostics", thread.diagnostics);
    json->Key("open_frames");
    json->BeginArray();
    for (const auto& frame : thread.open_frames) {
      json->BeginObject();
      json->Key("function_id");
      if (frame.function == shm::kNoFunction) {
        json->Null();
      } else {
        json->Uint(frame.function);
      }
      json->Field("function", OpenFrameFunctionName(s, frame));
      json->Field("entry_ticks", frame.entry_ticks);
      json->Field("elapsed_ms", OpenFrameElapsedMs(s, frame));
      json->Field("inherited", frame.inherited);
      json->EndObject();
    }
    json->EndArray();
    json->EndObject();
  }
  json->EndArray();
  json->Field("retired_threads", s.retired_threads);
}

void WriteCounters(JsonWriter* json, const shm::Snapshot& s) {
  json->Key("process_counters");
  json->BeginObject();
  json->Field("functions_registered", s.functions_registered);
  json->Field("function_table_full", s.function_table_full);
  json->Field("function_ids_wasted", s.function_ids_wasted);
  json->Field("threads_started", s.threads_started);
  json->Field("threads_retired", s.threads_retired);
  json->Field("threads_without_slot", s.threads_without_slot);
  json->Field("calls_without_slot", s.calls_without_slot);
  json->Field("forks_followed", s.forks_followed);
  json->Field("calls_during_hooks", s.calls_during_hooks);
  json->Field("calls_during_hooks_lost", s.calls_during_hooks_lost);
  json->EndObject();
  WriteDiagnostics(json, "diagnostics", s.diagnostics);
  json->Key("flows");
  if (!s.flows.present) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Field("sample_every", s.flows.sample_every);
  json->Field("events_per_thread", s.flows.events_per_thread);
  json->Field("published", s.flows.published);
  json->Field("cut", s.flows.cut);
  json->Field("abandoned", s.flows.abandoned);
  json->EndObject();
}

}  // namespace

std::string RenderDumpJson(const DumpData& dump) {
  JsonWriter json;
  json.BeginObject();
  WriteHeader(&json, dump);
  WriteFunctions(&json, dump.snapshot);
  WriteThreads(&json, dump.snapshot);
  WriteCounters(&json, dump.snapshot);
  json.Key("samples");
  WriteSampleProfileJson(&json, BuildSampleProfile(dump.snapshot));
  WriteIoJson(&json, dump.snapshot, SegmentLifetimeSeconds(dump));
  WriteNodeMetricsJson(&json, dump.snapshot.node_metrics);
  WriteAnalyzerHealthJson(&json, dump.snapshot.analyzer_health, dump.snapshot.analyzer_shedding);
  WriteScoreStatusJson(&json, dump.snapshot.score_status);
  WritePeerStatusJson(&json, dump.snapshot.peer_status);
  json.EndObject();
  return json.str();
}

}  // namespace limpwatch::cli
