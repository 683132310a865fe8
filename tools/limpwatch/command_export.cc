// `limpwatch export RECORDINGS...`: recordings in formats other tools open,
// Chrome trace-event JSON (chrome_trace.h) or folded stacks
// (folded_stacks.h), written as the recordings are read.
#include <map>

#include "args.h"
#include "chrome_trace.h"
#include "commands.h"
#include "export_sink.h"
#include "folded_stacks.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/thresholds.h"
#include "output.h"
#include "progress_bar.h"
#include "recording_scan.h"
#include "run_replay.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kExportOptions[] = {
    {"--output", "-o", true},  {"--format", "", true},       {"--no-alarms", "", false},
    {"--thresholds", "-t", true}, {"--manifest", "-m", true}, {"--help", "-h", false},
};

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct AlarmSettings {
  analyzer::AnalyzerConfig config;
  analyzer::Thresholds thresholds;
  analyzer::ResourceManifest manifest;
};

// The alarms `diagnose` raises on the same recordings, with the same
// settings. The replay compares every server's windows with its peers', so
// it holds every tick of every recording while it runs; they are let go
// before the export is written.
bool ReplayAlarms(const std::vector<std::string>& paths, const AlarmSettings& settings,
                  std::vector<analyzer::Alarm>* alarms, std::string* error) {
  LoadedRun run;
  if (!LoadRun(paths, &run, error)) return false;
  // The scan has already warned of the recordings' problems.
  ProgressBar progress("replaying");
  analyzer::ReplayResult result = ReplayRun(run, settings.config, settings.thresholds, settings.manifest,
                                            [&progress](size_t done, size_t total) { progress.Update(done, total); });
  progress.Finish();
  *alarms = std::move(result.alarms);
  return true;
}

int ExportChrome(const std::vector<std::string>& paths, const RecordingScan& scan,
                 const std::vector<analyzer::Alarm>& alarms, ExportSink* sink) {
  std::map<std::string, uint32_t> pids;
  std::map<std::string, std::vector<TrackedFunction>> tracked;
  ChromeTraceWriter trace(sink);
  trace.BeginDocument();
  for (const auto& [server, totals] : scan.servers) {
    uint32_t pid = uint32_t(pids.size()) + 1;
    pids[server] = pid;
    tracked[server] = ChooseTrackedFunctions(totals, scan.names);
    trace.ProcessName(pid, server);
  }
  std::string error;
  std::vector<std::string> problems_again;  // the scan's, already reported
  for (const std::string& path : paths) {
    bool read = ForEachRecord(
        path,
        [&](const std::string& server, const analyzer::TickRecord& tick) {
          if (trace.ok()) trace.TickCounters(pids[server], tick, tracked[server]);
        },
        [&](const std::string& server, const analyzer::FlowsRecord& flows) {
          for (const analyzer::FlowSample& flow : flows.flows) {
            if (trace.ok()) trace.FlowSlices(pids[server], flow, scan.names);
          }
        },
        nullptr, &problems_again, &error);
    // The file was read whole a moment ago: it changed or went since.
    if (!read) return Fail(kExitFailure, error);
    if (!trace.ok()) break;
  }
  for (const analyzer::Alarm& alarm : alarms) {
    auto found = pids.find(alarm.server);
    trace.AlarmInstant(found != pids.end() ? found->second : 0, alarm);
  }
  trace.EndDocument();
  return sink->Finish();
}

}  // namespace

int RunExport(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kExportOptions, &parsed, &error)) return UsageError("export", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("export"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("export", "missing recordings (RECORDINGS...)");
  for (const std::string& path : parsed.positional) {
    if (EndsWith(path, ".csv")) return UsageError("export", "'" + path + "': export reads recordings, not CSV");
  }
  const std::string* format = parsed.Value("--format");
  bool folded_flows = format != nullptr && *format == "folded-flows";
  bool folded = (format != nullptr && *format == "folded") || folded_flows;
  if (format != nullptr && !folded && *format != "chrome") {
    return UsageError("export", "--format is chrome, folded or folded-flows, not '" + *format + "'");
  }
  bool with_alarms = !folded && !parsed.Has("--no-alarms");
  if (!with_alarms) {
    for (const char* option : {"--thresholds", "--manifest"}) {
      if (parsed.Has(option)) return UsageError("export", std::string(option) + " applies to the chrome format's alarms");
    }
  }
  const std::string* output = parsed.Value("--output");
  std::string output_path = output != nullptr ? *output : "-";
  if (output_path.empty()) return UsageError("export", "-o takes a file, or - for standard output");

  // The replay's settings as `diagnose` takes them: out of range is a usage error.
  AlarmSettings settings;
  std::vector<std::string> problems;
  settings.config = analyzer::ReadAnalyzerConfigFromEnvironment(&problems);
  if (!problems.empty()) return UsageError("export", problems.front());
  if (const std::string* path = parsed.Value("--thresholds")) {
    if (!settings.thresholds.Load(*path, &problems)) return Fail(kExitFailure, "thresholds '" + *path + "': cannot read");
  }
  if (const std::string* path = parsed.Value("--manifest")) {
    if (!settings.manifest.Load(*path, &problems)) return Fail(kExitFailure, "manifest '" + *path + "': cannot read");
  }

  // Every file is read once before anything is written, so that an
  // unreadable one fails the export before it creates its output.
  RecordingScan scan;
  if (!ScanRecordings(parsed.positional, kTopFunctionsPerTick, &scan, &error)) return Fail(kExitFailure, error);
  problems.insert(problems.end(), scan.problems.begin(), scan.problems.end());
  for (const std::string& problem : problems) Warn(problem);
  if (scan.ticks == 0) return Fail(kExitFailure, "no tick records in the given recordings");

  std::vector<analyzer::Alarm> alarms;
  if (with_alarms && !ReplayAlarms(parsed.positional, settings, &alarms, &error)) return Fail(kExitFailure, error);

  std::unique_ptr<ExportSink> sink = ExportSink::Open(output_path, &error);
  if (!sink) return Fail(kExitFailure, error);
  if (folded) {
    sink->Write(folded_flows ? RenderFoldedFlowStacks(scan) : RenderFoldedStacks(scan));
    return sink->Finish();
  }
  return ExportChrome(parsed.positional, scan, alarms, sink.get());
}

}  // namespace limpwatch::cli
