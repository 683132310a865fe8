// `limpwatch report RECORDINGS... -o report.html`: the recordings of a
// cluster replayed as `diagnose` replays them, written as one self-contained
// HTML page (report/report_html.h) to keep with the incident.
#include <algorithm>

#include "args.h"
#include "commands.h"
#include "format.h"
#include "output.h"
#include "progress_bar.h"
#include "report_html.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kReportOptions[] = {
    {"--output", "-o", true}, {"--thresholds", "-t", true}, {"--manifest", "-m", true}, {"--rule", "", true},
    {"--budget", "", true},   {"--title", "", true},        {"--help", "-h", false},
};

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int RunReport(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kReportOptions, &parsed, &error)) return UsageError("report", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("report"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("report", "missing recordings (RECORDINGS...)");
  const std::string* output = parsed.Value("--output");
  if (output == nullptr || output->empty()) return UsageError("report", "missing -o FILE (where to write the page)");
  for (const std::string& path : parsed.positional) {
    if (EndsWith(path, ".csv")) return UsageError("report", "'" + path + "': the report reads recordings, not CSV");
  }

  // Settings as `diagnose` takes them: out of range is a usage error here.
  report::ReplaySettings settings;
  std::vector<std::string> problems;
  settings.config = analyzer::ReadAnalyzerConfigFromEnvironment(&problems);
  if (!problems.empty()) return UsageError("report", problems.front());
  if (const std::string* rule = parsed.Value("--rule")) {
    auto parsed_rule = analyzer::ParseDecisionRule(*rule);
    if (!parsed_rule) return UsageError("report", "--rule is calibrated or seed, not '" + *rule + "'");
    settings.config.decision_rule = *parsed_rule;
  }
  if (const std::string* budget = parsed.Value("--budget")) {
    double days = 0;
    if (!ParseSeconds(*budget, &days) || days < 1 || days > 1e6) {
      return UsageError("report", "--budget takes server-days per false alarm, from 1 to 1000000");
    }
    settings.config.server_days_per_false_alarm = days;
  }
  if (const std::string* path = parsed.Value("--thresholds")) {
    if (!settings.thresholds.Load(*path, &problems)) return Fail(kExitFailure, "thresholds '" + *path + "': cannot read");
    settings.thresholds_path = *path;
  }
  if (const std::string* path = parsed.Value("--manifest")) {
    if (!settings.manifest.Load(*path, &problems)) return Fail(kExitFailure, "manifest '" + *path + "': cannot read");
    settings.manifest_path = *path;
  }

  if (!report::CanWriteReportFile(*output, &error)) return Fail(kExitFailure, error);

  report::ReportPage page;
  report::ClusterReport cluster;
  cluster.problems = problems;
  ProgressBar progress("replaying");
  if (!report::BuildClusterReport(parsed.positional, settings, &cluster, &error,
                                  [&progress](size_t done, size_t total) { progress.Update(done, total); })) {
    return Fail(kExitFailure, error);
  }
  progress.Finish();
  for (const std::string& problem : cluster.problems) Warn(problem);
  const std::string* title = parsed.Value("--title");
  page.title = title != nullptr ? *title : "limpwatch report, " + std::to_string(cluster.servers.size()) + " servers";
  size_t alarms = cluster.alarms.size(), servers = cluster.servers.size();
  page.clusters.push_back(std::move(cluster));

  std::string html = report::RenderReportHtml(page);
  if (!report::WriteReportFile(*output, html, &error)) return Fail(kExitFailure, error);
  WriteOut("report: " + *output + " (" + std::to_string(servers) + " servers, " + std::to_string(alarms) +
           " alarm(s), " + FormatBytes(html.size()) + ")\n");
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
