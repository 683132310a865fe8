// `limpwatch diagnose FILES...`: the online analysis, replayed over the
// recordings of several servers (or over per-peer time series in CSV), with
// a verdict per peer at the end.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "diagnose_rpca.h"
#include "format.h"
#include "limpwatch/analyzer/cluster_replay.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/series_diagnosis.h"
#include "limpwatch/analyzer/series_table.h"
#include "limpwatch/analyzer/thresholds.h"
#include "output.h"
#include "progress_bar.h"
#include "run_replay.h"
#include "usage.h"
#include "verdict_table.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kDiagnoseOptions[] = {
    {"--thresholds", "-t", true}, {"--manifest", "-m", true}, {"--json", "", false},  {"--windows", "", false},
    {"--scores", "", false},      {"--rule", "", true},       {"--budget", "", true}, {"--tick", "", true},
    {"--load", "", true},         {"--symptom", "", true},    {"--help", "-h", false},  {"--rpca", "", false},
};

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> SplitList(const std::string* text) {
  std::vector<std::string> names;
  if (text == nullptr) return names;
  std::stringstream stream(*text);
  for (std::string name; std::getline(stream, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

// A column whose name says it counts work rather than time: throughput,
// operations, requests, bytes, bandwidth, a rate. Never a symptom unless
// --symptom names it.
bool LooksLikeLoad(const std::string& column) {
  std::string name;
  for (char c : column) name += char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"throughput", "iops", "ops", "bandwidth", "bw", "bytes", "mbps", "kbps", "qps", "rps",
                           "requests", "reqs", "rate", "load", "tput", "xput"}) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

struct Settings {
  analyzer::AnalyzerConfig config;
  bool json = false;
  bool windows = false;
  bool every_score = false;
};

std::string WindowLine(const analyzer::WindowResult& window, bool every_score) {
  std::string line = "window " + std::to_string(window.window) + ": " + std::to_string(window.servers.size()) +
                     " servers";
  for (const std::string& server : window.indicted) line += ", indicts " + server;
  // Why: every score over its threshold (all of them with --scores).
  for (const analyzer::MetricScore& score : window.scores) {
    if (!score.anomalous && !every_score) continue;
    line += "; " + score.server + " " + analyzer::ComparedMetricName(score.metric) + " " + FormatFixed(score.score, 2) +
            (score.anomalous ? " > " : " <= ") + FormatFixed(score.threshold, 2) +
            (score.ratio > 0 ? " (x" + FormatFixed(score.ratio, 3) + ", noise " + FormatFixed(score.sigma, 3) + ")"
                             : std::string()) +
            (score.warming_up ? " (warming up)" : "");
  }
  return line + "\n";
}

int DiagnoseSeries(const std::vector<std::string>& paths, const ParsedArgs& parsed, const Settings& settings) {
  analyzer::SeriesReadOptions options;
  if (const std::string* tick = parsed.Value("--tick")) {
    if (!ParseSeconds(*tick, &options.tick_s) || options.tick_s <= 0 || options.tick_s > 86400) {
      return UsageError("diagnose", "--tick takes a sample interval in seconds, more than 0 and at most 86400");
    }
  }
  analyzer::SeriesTable table;
  std::string error;
  for (const std::string& path : paths) {
    std::ifstream file(path);
    if (!file) return Fail(kExitFailure, path + ": cannot open");
    std::stringstream text;
    text << file.rdbuf();
    if (!analyzer::ReadSeriesCsv(text.str(), path, options, &table, &error)) return Fail(kExitFailure, error);
  }
  if (!analyzer::FinishSeriesTable(options, &table, &error)) return Fail(kExitFailure, paths.front() + ": " + error);
  for (const std::string& problem : table.problems) Warn(problem);

  std::vector<std::string> loads = SplitList(parsed.Value("--load"));
  std::vector<std::string> symptoms = SplitList(parsed.Value("--symptom"));
  std::set<std::string> known(table.columns.begin(), table.columns.end());
  for (const std::string& name : loads) {
    if (!known.count(name)) return UsageError("diagnose", "--load names no column '" + name + "'");
  }
  for (const std::string& name : symptoms) {
    if (!known.count(name)) return UsageError("diagnose", "--symptom names no column '" + name + "'");
  }
  std::vector<analyzer::DecisionMetric> columns;
  std::vector<std::string> guessed;
  for (const std::string& name : table.columns) {
    bool load = std::count(loads.begin(), loads.end(), name) > 0;
    if (!load && loads.empty() && !std::count(symptoms.begin(), symptoms.end(), name) && LooksLikeLoad(name)) {
      load = true;
      guessed.push_back(name);
    }
    columns.push_back({name, load ? analyzer::EvidenceKind::kLoad : analyzer::EvidenceKind::kLevel,
                       shm::Resource::kUnknown, 0});
  }
  size_t symptom_count = std::count_if(columns.begin(), columns.end(), [](const analyzer::DecisionMetric& column) {
    return column.kind != analyzer::EvidenceKind::kLoad;
  });
  if (symptom_count == 0) {
    return UsageError("diagnose", "every column is a load: name the latency columns with --symptom");
  }
  for (const std::string& name : guessed) {
    Warn("column '" + name + "' is taken as a load (its name says so): it explains latency and is never a symptom; "
         "--symptom " + name + " compares it");
  }

  analyzer::SeriesSettings series;
  series.window_ticks = settings.config.window_ticks;
  series.shift_ticks = settings.config.shift_ticks;
  series.tick_s = table.tick_s;
  series.suppression_s = settings.config.alarm_suppression_s;
  series.first_unix_ms = uint64_t(std::llround(table.first_time_s * 1000.0));
  analyzer::DecisionSettings decision;
  decision.server_days_per_false_alarm = settings.config.server_days_per_false_alarm;
  decision.warmup_windows = settings.config.warmup_windows;
  decision.keep_verdicts = true;
  analyzer::SeriesDiagnosis diagnosis(series, decision, columns);
  if (settings.windows || settings.every_score) {
    diagnosis.OnWindow([&](const analyzer::DecisionWindow& window) {
      std::string line = "window " + std::to_string(window.window) + ": " + std::to_string(window.servers.size()) +
                         " peers";
      for (const auto& server : window.servers) {
        if (server.indicted) line += ", indicts " + server.server;
      }
      for (const auto& server : window.servers) {
        for (size_t c = 0; c < columns.size(); ++c) {
          const analyzer::MetricEvidence& metric = server.metrics[c];
          if (!metric.compared || columns[c].kind == analyzer::EvidenceKind::kLoad) continue;
          if (!settings.every_score && metric.statistic < 1.0) continue;
          line += "; " + server.server + " " + columns[c].name + " " + FormatFixed(metric.statistic * diagnosis.decision().threshold(), 2) +
                  (metric.statistic >= 1.0 ? " > " : " <= ") + FormatFixed(diagnosis.decision().threshold(), 2) + " (x" +
                  FormatFixed(std::exp(metric.log_ratio), 3) + ", noise " + FormatFixed(metric.sigma, 3) + ")" +
                  (server.warming_up ? " (warming up)" : "");
        }
      }
      WriteOut(line + "\n");
    });
  }
  std::vector<analyzer::Alarm> alarms;
  ProgressBar progress("diagnosing");
  std::vector<std::string> peers;
  std::vector<std::vector<double>> values;
  for (size_t index = 0; index < table.rows.size();) {
    uint64_t tick = table.rows[index].tick;
    peers.clear();
    values.clear();
    for (; index < table.rows.size() && table.rows[index].tick == tick; ++index) {
      peers.push_back(table.peers[table.rows[index].peer]);
      values.push_back(table.rows[index].values);
    }
    for (analyzer::Alarm& alarm : diagnosis.AddTick(tick, peers, values)) {
      WriteOut((settings.json ? analyzer::AlarmToJson(alarm) : analyzer::AlarmToLogLine(alarm)) + "\n");
      alarms.push_back(std::move(alarm));
    }
    progress.Update(index, table.rows.size());
  }
  progress.Finish();

  PeerVerdictInput verdicts;
  verdicts.verdicts = diagnosis.decision().Verdicts();
  for (const analyzer::DecisionMetric& column : columns) {
    verdicts.metric_names.push_back(column.name);
    verdicts.symptoms.push_back(column.kind != analyzer::EvidenceKind::kLoad);
  }
  verdicts.alarms = alarms;
  double window_s = table.tick_s * series.shift_ticks;
  uint64_t first_ms = series.first_unix_ms;
  verdicts.window_end_ms = [first_ms, window_s](uint64_t window) {
    return first_ms + uint64_t(std::llround(double(window) * window_s * 1000.0));
  };
  if (settings.json) {
    WriteOut(RenderVerdictJson(verdicts));
    return FinishOutput(kExitOk);
  }
  size_t limping = std::count_if(verdicts.verdicts.begin(), verdicts.verdicts.end(),
                                 [](const analyzer::ServerVerdict& verdict) { return verdict.indicted_windows > 0; });
  WriteOut("\n" + RenderVerdictTable(verdicts));
  WriteOut(std::to_string(table.peers.size()) + " peers, a sample every " + FormatNumber(table.tick_s) + " s" +
           (table.tick_detected ? " (from the timestamps)" : "") + ", " + std::to_string(diagnosis.windows()) +
           " windows; " + std::to_string(alarms.size()) + " alarm(s), " + std::to_string(limping) +
           " peer(s) limping; false-alarm budget: 1 per " + FormatNumber(decision.server_days_per_false_alarm) +
           " server-days (evidence threshold " + FormatFixed(diagnosis.decision().threshold(), 1) + ")\n");
  return FinishOutput(kExitOk);
}

int DiagnoseRecordings(const std::vector<std::string>& paths, const ParsedArgs& parsed, const Settings& settings) {
  std::vector<std::string> problems;
  analyzer::Thresholds thresholds;
  if (const std::string* path = parsed.Value("--thresholds")) {
    if (!thresholds.Load(*path, &problems)) return Fail(kExitFailure, "thresholds '" + *path + "': cannot read");
  }
  analyzer::ResourceManifest manifest;
  if (const std::string* path = parsed.Value("--manifest")) {
    if (!manifest.Load(*path, &problems)) return Fail(kExitFailure, "manifest '" + *path + "': cannot read");
  }
  LoadedRun run;
  std::string error;
  if (!LoadRun(paths, &run, &error)) return Fail(kExitFailure, error);
  for (const std::string& problem : run.problems) problems.push_back(problem);
  for (const std::string& problem : problems) Warn(problem);
  analyzer::AnalyzerConfig config = ReplayConfigFor(run, settings.config);

  ProgressBar progress("diagnosing");
  analyzer::ReplayResult result = ReplayRun(run, config, thresholds, manifest,
                                            [&progress](size_t done, size_t total) { progress.Update(done, total); });
  progress.Finish();

  if (settings.windows || settings.every_score) {
    for (const analyzer::WindowResult& window : result.windows) WriteOut(WindowLine(window, settings.every_score));
  }
  for (const analyzer::Alarm& alarm : result.alarms) {
    WriteOut((settings.json ? analyzer::AlarmToJson(alarm) : analyzer::AlarmToLogLine(alarm)) + "\n");
  }
  std::map<std::string, size_t> indicted_windows;
  for (const auto& window : result.windows) {
    for (const auto& server : window.indicted) ++indicted_windows[server];
  }
  if (!result.verdicts.empty()) {
    PeerVerdictInput verdicts;
    verdicts.verdicts = result.verdicts;
    for (int index = 0; index < analyzer::kComparedMetricCount; ++index) {
      verdicts.metric_names.push_back(analyzer::ComparedMetricName(static_cast<analyzer::ComparedMetric>(index)));
      verdicts.symptoms.push_back(true);
    }
    verdicts.alarms = result.alarms;
    uint64_t window_ms = uint64_t(config.tick_ms) * config.shift_ticks;
    verdicts.window_end_ms = [window_ms](uint64_t window) { return window * window_ms; };
    if (settings.json) {
      WriteOut(RenderVerdictJson(verdicts));
      return FinishOutput(kExitOk);
    }
    WriteOut("\n" + RenderVerdictTable(verdicts));
  }
  if (!settings.json) {
    std::string summary = std::to_string(result.windows.size()) + " windows of " + std::to_string(run.ticks.size()) +
                          " servers analyzed (" + analyzer::DecisionRuleName(config.decision_rule) + " rule), " +
                          std::to_string(result.alarms.size()) + " alarm(s)";
    for (const auto& [server, count] : indicted_windows) {
      summary += "; " + server + " indicted in " + std::to_string(count) + " window(s)";
    }
    WriteOut(summary + "\n");
  }
  return FinishOutput(kExitOk);
}

}  // namespace

int RunDiagnose(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kDiagnoseOptions, &parsed, &error)) return UsageError("diagnose", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("diagnose"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("diagnose", "missing recordings or CSV files (FILES...)");

  // In a command a setting out of its range is an error, not a default.
  Settings settings;
  std::vector<std::string> problems;
  settings.config = analyzer::ReadAnalyzerConfigFromEnvironment(&problems);
  if (!problems.empty()) return UsageError("diagnose", problems.front());
  if (const std::string* rule = parsed.Value("--rule")) {
    auto parsed_rule = analyzer::ParseDecisionRule(*rule);
    if (!parsed_rule) return UsageError("diagnose", "--rule is calibrated or seed, not '" + *rule + "'");
    settings.config.decision_rule = *parsed_rule;
  }
  if (const std::string* budget = parsed.Value("--budget")) {
    double days = 0;
    if (!ParseSeconds(*budget, &days) || days < 1 || days > 1e6) {
      return UsageError("diagnose", "--budget takes server-days per false alarm, from 1 to 1000000");
    }
    settings.config.server_days_per_false_alarm = days;
  }
  settings.json = parsed.Has("--json");
  settings.windows = parsed.Has("--windows");
  settings.every_score = parsed.Has("--scores");

  size_t csv = std::count_if(parsed.positional.begin(), parsed.positional.end(),
                             [](const std::string& path) { return EndsWith(path, ".csv"); });
  if (csv > 0 && csv < parsed.positional.size()) {
    return UsageError("diagnose", "CSV files and recordings cannot be diagnosed together");
  }
  if (parsed.Has("--rpca")) {
    for (const char* option : {"--thresholds", "--rule", "--budget", "--tick", "--load", "--symptom", "--scores"}) {
      if (parsed.Has(option)) return UsageError("diagnose", std::string(option) + " does not apply to --rpca");
    }
    return DiagnoseRpca({parsed.positional, parsed.Value("--manifest"), settings.config, settings.json,
                         settings.windows});
  }
  bool series = csv > 0 && settings.config.decision_rule == analyzer::DecisionRule::kCalibrated;
  if (!series) {
    for (const char* option : {"--tick", "--load", "--symptom"}) {
      if (parsed.Has(option)) {
        return UsageError("diagnose", std::string(option) + " applies to CSV files under the calibrated rule");
      }
    }
  } else if (parsed.Has("--thresholds")) {
    return UsageError("diagnose", "--thresholds applies to recordings; a CSV is judged on its own noise");
  }
  return series ? DiagnoseSeries(parsed.positional, parsed, settings)
                : DiagnoseRecordings(parsed.positional, parsed, settings);
}

}  // namespace limpwatch::cli
