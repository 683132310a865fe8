// `limpwatch compare BEFORE... -- AFTER...` (or `--split UNIX_MS
// RECORDINGS...`): what changed between a period that went well and one that
// did not, per function (analyzer/period_comparison.h), read one record at a
// time.
#include <string>
#include <unordered_map>
#include <vector>

#include "args.h"
#include "commands.h"
#include "compare_output.h"
#include "limpwatch/analyzer/period_comparison.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "output.h"
#include "recording_scan.h"
#include "report_html.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kCompareOptions[] = {
    {"--json", "", false}, {"--limit", "-l", true}, {"--alpha", "", true}, {"--manifest", "-m", true},
    {"--split", "", true}, {"--html", "", true}, {"--help", "-h", false},
};

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The words before the first "--" and after it, each parsed on its own, so
// that options may follow the AFTER recordings as well as precede them.
struct CompareWords {
  ParsedArgs options;
  std::vector<std::string> before;
  std::vector<std::string> after;
  bool has_separator = false;
};

bool SplitWords(const std::vector<std::string>& args, CompareWords* words, std::string* error) {
  std::vector<std::string> left, right;
  for (const std::string& arg : args) {
    if (arg == "--" && !words->has_separator) {
      words->has_separator = true;
    } else {
      (words->has_separator ? right : left).push_back(arg);
    }
  }
  ParsedArgs after;
  if (!ParseArgs(left, kCompareOptions, &words->options, error)) return false;
  if (!ParseArgs(right, kCompareOptions, &after, error)) return false;
  words->before = std::move(words->options.positional);
  words->after = std::move(after.positional);
  words->options.positional.clear();
  for (auto& [name, value] : after.options) words->options.options[name] = value;
  return true;
}

}  // namespace

int RunCompare(const std::vector<std::string>& args) {
  CompareWords words;
  std::string error;
  if (!SplitWords(args, &words, &error)) return UsageError("compare", error);
  const ParsedArgs& parsed = words.options;
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("compare"));
    return FinishOutput(kExitOk);
  }

  ComparisonReport report;
  if (const std::string* alpha = parsed.Value("--alpha")) {
    if (!ParseSeconds(*alpha, &report.settings.alpha) || report.settings.alpha <= 0 || report.settings.alpha >= 1) {
      return UsageError("compare", "--alpha takes a significance level between 0 and 1, not '" + *alpha + "'");
    }
  }
  if (const std::string* limit = parsed.Value("--limit")) {
    uint64_t rows = 0;
    if (!ParseUnsigned(*limit, &rows)) return UsageError("compare", "--limit takes a count of rows, not '" + *limit + "'");
    report.limit = size_t(rows);
  }
  const std::string* split = parsed.Value("--split");
  if (split != nullptr) {
    if (!ParseUnsigned(*split, &report.split_unix_ms) || report.split_unix_ms == 0) {
      return UsageError("compare", "--split takes a time in unix milliseconds, not '" + *split + "'");
    }
    if (words.has_separator) return UsageError("compare", "--split compares ranges of one set of recordings: no '--'");
    report.before.recordings = words.before;
    report.after.recordings = words.before;
    if (words.before.empty()) return UsageError("compare", "missing recordings to split (RECORDINGS...)");
  } else {
    if (!words.has_separator) {
      return UsageError("compare", "missing '--' between the BEFORE and the AFTER recordings (or --split UNIX_MS)");
    }
    if (words.before.empty()) return UsageError("compare", "no BEFORE recordings before '--'");
    if (words.after.empty()) return UsageError("compare", "no AFTER recordings after '--'");
    report.before.recordings = words.before;
    report.after.recordings = words.after;
  }
  for (const auto* list : {&words.before, &words.after}) {
    for (const std::string& path : *list) {
      if (EndsWith(path, ".csv")) return UsageError("compare", "'" + path + "': compare reads recordings, not CSV");
    }
  }

  const std::string* html = parsed.Value("--html");
  if (html != nullptr && html->empty()) return UsageError("compare", "--html takes the page's file name");
  if (html != nullptr && !report::CanWriteReportFile(*html, &error)) return Fail(kExitFailure, error);

  // BEFORE: a profile per recording, grouped into runs by time; AFTER: one.
  std::vector<analyzer::PeriodProfile> baseline;
  analyzer::PeriodProfile after;
  std::unordered_map<uint64_t, std::string> names;
  std::vector<std::string> problems;
  if (split != nullptr) {
    // A tick that ends at the split lies wholly before it.
    analyzer::PeriodProfile before;
    for (const std::string& path : words.before) {
      bool read = ForEachRecord(
          path,
          [&](const std::string& server, const analyzer::TickRecord& tick) {
            (tick.unix_ms <= report.split_unix_ms ? before : after).Add(server, tick);
          },
          [&](const std::string&, const analyzer::FlowsRecord& flows) {
            (flows.unix_ms <= report.split_unix_ms ? before : after).AddFlows(flows);
          },
          &names, &problems, &error);
      if (!read) return Fail(kExitFailure, error);
    }
    if (before.ticks() > 0) baseline.push_back(std::move(before));
  } else {
    std::vector<analyzer::PeriodProfile> recordings(words.before.size());
    for (size_t index = 0; index < words.before.size(); ++index) {
      analyzer::PeriodProfile* period = &recordings[index];
      bool read = ForEachRecord(
          words.before[index],
          [period](const std::string& server, const analyzer::TickRecord& tick) { period->Add(server, tick); },
          [period](const std::string&, const analyzer::FlowsRecord& flows) { period->AddFlows(flows); }, &names,
          &problems, &error);
      if (!read) return Fail(kExitFailure, error);
    }
    baseline = analyzer::GroupIntoRuns(std::move(recordings));
    for (const std::string& path : words.after) {
      bool read = ForEachRecord(
          path, [&after](const std::string& server, const analyzer::TickRecord& tick) { after.Add(server, tick); },
          [&after](const std::string&, const analyzer::FlowsRecord& flows) { after.AddFlows(flows); }, &names,
          &problems, &error);
      if (!read) return Fail(kExitFailure, error);
    }
  }
  // An empty period ends the command in one line; the recordings' problems
  // (each file without ticks among them) would only repeat it.
  if (baseline.empty()) {
    return Fail(kExitFailure, split != nullptr ? "no tick ends at or before the split at " + *split
                                               : std::string("the BEFORE recordings hold no tick records"));
  }
  if (after.ticks() == 0) {
    return Fail(kExitFailure, split != nullptr ? "no tick ends after the split at " + *split
                                               : std::string("the AFTER recordings hold no tick records"));
  }
  for (const std::string& problem : problems) Warn(problem);

  analyzer::PeriodComparison comparison = analyzer::ComparePeriods(baseline, after, report.settings);
  analyzer::CategoryComparison categories = analyzer::CompareCategories(baseline, after, report.settings);
  // Threads waiting for work (the manifest's idle functions) wait longer
  // whenever there is less work: a change of load, never a cause.
  if (const std::string* path = parsed.Value("--manifest")) {
    analyzer::ResourceManifest manifest;
    std::vector<std::string> manifest_problems;
    if (!manifest.Load(*path, &manifest_problems)) return Fail(kExitFailure, "manifest '" + *path + "': cannot read");
    for (const std::string& problem : manifest_problems) Warn(problem);
    std::erase_if(comparison.mutations, [&](const analyzer::FunctionChange& change) {
      auto name = names.find(change.name_hash);
      return name != names.end() && manifest.IsIdle(name->second);
    });
  }
  for (const analyzer::PeriodProfile& run : baseline) report.before.runs.push_back(&run);
  report.after.runs.push_back(&after);
  report.comparison = &comparison;
  report.categories = &categories;
  report.names = &names;
  if (html != nullptr && !report::WriteReportFile(*html, RenderComparisonHtml(report), &error)) {
    return Fail(kExitFailure, error);
  }
  WriteOut(parsed.Has("--json") ? RenderComparisonJson(report) : RenderComparisonText(report));
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
