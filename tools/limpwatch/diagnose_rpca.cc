#include "diagnose_rpca.h"

#include <map>

#include "commands.h"
#include "format.h"
#include "limpwatch/analyzer/category_diagnosis.h"
#include "limpwatch/analyzer/flow_categories.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/rpca_detector.h"
#include "output.h"
#include "recording_scan.h"
#include "recordings.h"

namespace limpwatch::cli {
namespace {

constexpr size_t kRankedShown = 10;

std::string StepLine(const analyzer::RpcaStep& step, const analyzer::NameBook& names) {
  std::string line = "tick " + std::to_string(step.index) + ": " + std::to_string(step.servers) + " servers, " +
                     std::to_string(step.columns) + " functions, rank " + std::to_string(step.rank);
  for (const std::string& server : step.indicted) line += ", indicts " + server;
  for (const auto& [server, functions] : step.votes) {
    line += "; " + server + " slow in";
    for (uint32_t key : functions) line += " " + names.NameOfKey(key);
  }
  return line + "\n";
}

std::string NameOf(const std::unordered_map<uint64_t, std::string>& names, uint64_t hash) {
  auto found = names.find(hash);
  return found != names.end() ? found->second : "0x" + FormatHex16(hash);
}

// CloudDiag per request category: its alarms (a function slow on one
// server's flows names that server) and, unless JSON, what it found.
struct CategoryReport {
  std::vector<analyzer::CategoryFinding> findings;
  size_t analyzed = 0;
  uint64_t flows = 0;
  std::unordered_map<uint64_t, std::string> names;
};

bool DiagnoseCategories(const std::vector<std::string>& paths, CategoryReport* report, std::string* error) {
  analyzer::CategoryDiagnosis diagnosis;
  std::vector<std::string> problems;  // LoadRun reported them already
  for (const std::string& path : paths) {
    auto on_flows = [&](const std::string& server, const analyzer::FlowsRecord& record) {
      for (const analyzer::FlowSample& flow : record.flows) {
        diagnosis.Add(server, flow);
        ++report->flows;
      }
    };
    if (!ForEachRecord(path, nullptr, on_flows, &report->names, &problems, error)) return false;
  }
  report->findings = diagnosis.Analyze(&report->analyzed);
  return true;
}

std::vector<analyzer::Alarm> CategoryAlarms(const CategoryReport& report, const analyzer::ResourceManifest& manifest) {
  std::vector<analyzer::Alarm> alarms;
  for (const analyzer::CategoryFinding& finding : report.findings) {
    std::string category = analyzer::CategorizeFlow(finding.example, [&](uint64_t hash) {
                             return NameOf(report.names, hash);
                           }).display;
    for (const analyzer::SlowFunction& function : finding.functions) {
      if (function.server.empty()) continue;
      analyzer::Alarm alarm;
      alarm.time_unix_ms = alarm.raised_unix_ms = function.last_slow_unix_ms;
      alarm.reporter = analyzer::kRpcaDetectorName;
      alarm.server = function.server;
      alarm.metrics = {"flows " + category};
      std::string name = NameOf(report.names, function.name_hash);
      alarm.resource = manifest.Classify(name);
      alarm.score = 1 - function.beta;
      alarm.top_functions.push_back({0, function.name_hash, name, 1 - function.beta, alarm.resource});
      size_t slow = function.slow_flows.at(function.server);
      alarm.reason = name + " slow in " + std::to_string(slow) + " of " +
                     std::to_string(finding.flows_by_server.at(function.server)) + " flows on " + function.server +
                     " (CloudDiag: cos " + FormatFixed(function.beta, 2) + " to its low-rank part)";
      alarms.push_back(std::move(alarm));
    }
  }
  return alarms;
}

std::string CategoryText(const CategoryReport& report) {
  std::string text = "\nrequest categories (CloudDiag per category): " + std::to_string(report.flows) + " flows, " +
                     std::to_string(report.analyzed) + " categories with enough flows from two or more servers";
  if (report.findings.empty()) return text + ", none with an anomalous function\n";
  text += ":\n";
  for (const analyzer::CategoryFinding& finding : report.findings) {
    text += "  " + analyzer::CategorizeFlow(finding.example, [&](uint64_t hash) {
                     return NameOf(report.names, hash);
                   }).display +
            "\n    " + std::to_string(finding.flows) + " flows, CV " + FormatFixed(finding.cv, 2) + "\n";
    for (const analyzer::SlowFunction& function : finding.functions) {
      text += "    " + analyzer::ShortFunctionName(NameOf(report.names, function.name_hash)) + " (cos " +
              FormatFixed(function.beta, 2) + "): slow in";
      for (const auto& [server, count] : function.slow_flows) {
        text += " " + server + " " + std::to_string(count) + "/" + std::to_string(finding.flows_by_server.at(server));
      }
      text += function.server.empty() ? ", no server holds most\n" : " -> " + function.server + "\n";
    }
  }
  return text;
}

}  // namespace

int DiagnoseRpca(const RpcaCommand& command) {
  std::vector<std::string> problems;
  analyzer::ResourceManifest manifest;
  if (command.manifest != nullptr && !manifest.Load(*command.manifest, &problems)) {
    return Fail(kExitFailure, "manifest '" + *command.manifest + "': cannot read");
  }
  LoadedRun run;
  std::string error;
  if (!LoadRun(command.paths, &run, &error)) return Fail(kExitFailure, error);
  if (run.from_csv) return Fail(kExitUsage, "--rpca reads recordings, not CSV");
  for (const std::string& problem : run.problems) problems.push_back(problem);
  for (const std::string& problem : problems) Warn(problem);
  analyzer::AnalyzerConfig config = command.config;
  config.tick_ms = run.tick_ms;

  analyzer::RpcaReplay replay = analyzer::ReplayRpca(config, run.ticks, manifest, run.names);
  CategoryReport categories;
  if (!DiagnoseCategories(command.paths, &categories, &error)) return Fail(kExitFailure, error);
  std::vector<analyzer::Alarm> category_alarms = CategoryAlarms(categories, manifest);
  if (command.steps) {
    for (const analyzer::RpcaStep& step : replay.steps) WriteOut(StepLine(step, run.names));
  }
  for (const std::vector<analyzer::Alarm>* alarms : {&replay.alarms, &category_alarms}) {
    for (const analyzer::Alarm& alarm : *alarms) {
      WriteOut((command.json ? analyzer::AlarmToJson(alarm) : analyzer::AlarmToLogLine(alarm)) + "\n");
    }
  }
  if (command.json) return FinishOutput(kExitOk);
  std::map<std::string, size_t> indicted_steps;
  for (const analyzer::RpcaStep& step : replay.steps) {
    for (const std::string& server : step.indicted) ++indicted_steps[server];
  }
  std::string summary = "\nfunctions most often anomalous (CloudDiag's ranking: steps anomalous, of them naming one server):\n";
  for (size_t i = 0; i < replay.ranking.size() && i < kRankedShown; ++i) {
    const analyzer::RankedFunction& ranked = replay.ranking[i];
    summary += "  " + std::to_string(ranked.times_anomalous) + " / " + std::to_string(ranked.times_voting) + "  " +
               ranked.name + "\n";
  }
  if (replay.ranking.empty()) summary += "  none\n";
  summary += std::to_string(replay.steps.size()) + " steps of " + std::to_string(run.ticks.size()) +
             " servers analyzed (rpca, no training), " + std::to_string(replay.alarms.size()) + " alarm(s)";
  for (const auto& [server, count] : indicted_steps) {
    summary += "; " + server + " indicted in " + std::to_string(count) + " step(s)";
  }
  WriteOut(summary + "\n");
  if (categories.flows > 0) WriteOut(CategoryText(categories));
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
