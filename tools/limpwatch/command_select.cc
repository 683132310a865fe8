// limpwatch select: proposes what to trace from a recorded profile.
//
// The rule, with every threshold an option:
//   a function carries diagnostic weight when, in some window of some
//   profile, it was called at least --min-calls times or ran at least
//   --min-seconds (total time; seed 000, section 7.3), or when a rule of the
//   PVFS resource manifest (--manifest) names it;
//   its tracing cost dominates when calls x --cost-ns, summed over all
//   windows, exceeds --max-cost-percent of its own (self) time.
// Kept: weight and no dominating cost. The output is a LIMPWATCH_SELECT
// manifest of the kept functions (the rest stays untraced) and GCC flags that
// leave the dropped functions uninstrumented in a rebuild.
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "output.h"
#include "select_profile.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kSelectOptions[] = {
    {"--help", "-h", false},          {"--live", "", true},           {"--seconds", "", true},
    {"--window", "", true},           {"--manifest", "-m", true},     {"--min-calls", "", true},
    {"--min-seconds", "", true},      {"--cost-ns", "", true},        {"--unselected-cost-ns", "", true},
    {"--max-cost-percent", "", true}, {"--output", "-o", true},       {"--gcc-flags", "", true},
};

struct Thresholds {
  uint64_t min_calls = 100;
  double min_seconds = 1.0;
  double cost_ns = 30.0;            // a traced call (hotpath_benchmark: limpwatch)
  double unselected_cost_ns = 4.5;  // an unselected call (hotpath_benchmark: limpwatch_unselected)
  double max_cost_percent = 10.0;
};

struct Verdict {
  std::string name;
  uint64_t calls = 0;  // over all windows
  double self_ns = 0;
  bool weighty = false;
  bool named = false;
  bool costly = false;
  bool kept() const { return (weighty || named) && !costly; }
};

bool ReadThresholds(const ParsedArgs& parsed, Thresholds* out, std::string* error) {
  auto seconds = [&](std::string_view option, double* value) {
    const std::string* text = parsed.Value(option);
    if (text != nullptr && !ParseSeconds(*text, value)) {
      *error = std::string(option) + ": not a non-negative number: '" + *text + "'";
      return false;
    }
    return true;
  };
  if (const std::string* text = parsed.Value("--min-calls"); text != nullptr && !ParseUnsigned(*text, &out->min_calls)) {
    *error = "--min-calls: not a number: '" + *text + "'";
    return false;
  }
  return seconds("--min-seconds", &out->min_seconds) && seconds("--cost-ns", &out->cost_ns) &&
         seconds("--unselected-cost-ns", &out->unselected_cost_ns) &&
         seconds("--max-cost-percent", &out->max_cost_percent);
}

std::vector<Verdict> Decide(const std::vector<ProfileWindow>& windows, const analyzer::ResourceManifest& manifest,
                            const Thresholds& thresholds) {
  std::map<std::string, Verdict> verdicts;
  for (const ProfileWindow& window : windows) {
    for (const WindowedFunction& function : window.functions) {
      Verdict& verdict = verdicts[function.name];
      verdict.name = function.name;
      verdict.calls += function.calls;
      verdict.self_ns += function.self_ns;
      verdict.weighty = verdict.weighty || function.calls >= thresholds.min_calls ||
                        function.total_ns >= thresholds.min_seconds * 1e9;
    }
  }
  std::vector<Verdict> result;
  for (auto& [name, verdict] : verdicts) {
    if (verdict.calls == 0) continue;  // registered but never called: nothing to decide
    verdict.named = manifest.size() > 0 && manifest.Classify(name) != shm::Resource::kUnknown;
    verdict.costly = double(verdict.calls) * thresholds.cost_ns > thresholds.max_cost_percent / 100.0 * verdict.self_ns;
    result.push_back(verdict);
  }
  return result;
}

std::string RenderManifest(const std::vector<Verdict>& verdicts, const Thresholds& thresholds) {
  std::ostringstream text;
  text << "# Written by 'limpwatch select' (LIMPWATCH_SELECT syntax: include rules;\n"
       << "# a function not listed is not traced). Kept: >= " << thresholds.min_calls << " calls or >= "
       << thresholds.min_seconds << " s in some window, or named by the manifest,\n"
       << "# and calls x " << thresholds.cost_ns << " ns <= " << thresholds.max_cost_percent << " % of self time.\n";
  for (const Verdict& verdict : verdicts) {
    if (verdict.kept()) text << "include " << verdict.name << "\n";
  }
  return text.str();
}

// GCC matches -finstrument-functions-exclude-function-list entries as
// substrings of the user-visible name, and splits the list at commas: a
// dropped name that is part of a kept name, or holds a comma, cannot be
// listed (the runtime manifest still leaves it untraced).
std::string RenderGccFlags(const std::vector<Verdict>& verdicts, std::vector<std::string>* unlisted) {
  std::vector<std::string> kept;
  for (const Verdict& verdict : verdicts) {
    if (verdict.kept()) kept.push_back(verdict.name);
  }
  std::string list;
  for (const Verdict& verdict : verdicts) {
    if (verdict.kept()) continue;
    bool listable = verdict.name.find_first_of(", ") == std::string::npos;
    for (const std::string& name : kept) listable = listable && name.find(verdict.name) == std::string::npos;
    if (!listable) {
      unlisted->push_back(verdict.name);
      continue;
    }
    list += (list.empty() ? "" : ",") + verdict.name;
  }
  return list.empty() ? std::string() : "-finstrument-functions-exclude-function-list=" + list;
}

std::string FormatMs(double ns) {
  std::ostringstream text;
  text.precision(3);
  text << std::fixed << ns / 1e6 << " ms";
  return text.str();
}

}  // namespace

int RunSelect(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kSelectOptions, &parsed, &error)) return UsageError("select", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("select"));
    return FinishOutput(kExitOk);
  }
  Thresholds thresholds;
  if (!ReadThresholds(parsed, &thresholds, &error)) return UsageError("select", error);

  std::vector<ProfileWindow> windows;
  if (const std::string* live = parsed.Value("--live")) {
    double seconds = 10, window = 1;
    if (const std::string* text = parsed.Value("--seconds"); text != nullptr && !ParseSeconds(*text, &seconds)) {
      return UsageError("select", "--seconds: not a number: '" + *text + "'");
    }
    if (const std::string* text = parsed.Value("--window"); text != nullptr && !ParseSeconds(*text, &window)) {
      return UsageError("select", "--window: not a number: '" + *text + "'");
    }
    if (window <= 0) return UsageError("select", "--window must be positive");
    if (!ObserveLive(*live, seconds, window, &windows, &error)) return Fail(kExitFailure, error);
  }
  for (const std::string& path : parsed.positional) {
    ProfileWindow window;
    if (!LoadDumpJson(path, &window, &error)) return Fail(kExitFailure, error);
    windows.push_back(std::move(window));
  }
  if (windows.empty()) return UsageError("select", "give 'limpwatch dump --json' files or --live NAME");

  analyzer::ResourceManifest manifest;
  if (const std::string* path = parsed.Value("--manifest")) {
    std::vector<std::string> problems;
    if (!manifest.Load(*path, &problems)) return Fail(kExitFailure, *path + ": cannot be read");
    for (const std::string& problem : problems) Warn(problem);
  }

  std::vector<Verdict> verdicts = Decide(windows, manifest, thresholds);
  std::string manifest_text = RenderManifest(verdicts, thresholds);
  std::vector<std::string> unlisted;
  std::string flags = RenderGccFlags(verdicts, &unlisted);

  double all_cost = 0, selected_cost = 0, rebuilt_cost = 0, self_ns = 0;
  size_t kept = 0;
  for (const Verdict& verdict : verdicts) {
    double calls = double(verdict.calls);
    all_cost += calls * thresholds.cost_ns;
    selected_cost += calls * (verdict.kept() ? thresholds.cost_ns : thresholds.unselected_cost_ns);
    rebuilt_cost += verdict.kept() ? calls * thresholds.cost_ns : 0;
    self_ns += verdict.self_ns;
    kept += verdict.kept() ? 1 : 0;
  }

  std::ostringstream report;
  if (const std::string* output = parsed.Value("--output")) {
    std::ofstream(*output) << manifest_text;
    report << "manifest: " << *output << "\n";
  } else {
    report << manifest_text;
  }
  if (const std::string* path = parsed.Value("--gcc-flags")) {
    std::ofstream(*path) << flags << "\n";
    report << "gcc flags: " << *path << "\n";
  } else {
    report << "gcc flags: " << (flags.empty() ? "(none: nothing to exclude)" : flags) << "\n";
  }
  for (const std::string& name : unlisted) {
    report << "not in the gcc list (a substring of a kept name, or has a comma): " << name << "\n";
  }
  auto percent = [&](double ns) { return self_ns > 0 ? 100.0 * ns / self_ns : 0.0; };
  report << "kept " << kept << " of " << verdicts.size() << " functions called in " << windows.size()
         << " window(s)\n";
  report.precision(2);
  report << std::fixed;
  report << "estimated tracing cost: everything " << FormatMs(all_cost) << " (" << percent(all_cost)
         << " % of recorded self time); with the manifest " << FormatMs(selected_cost) << " ("
         << percent(selected_cost) << " %), saved " << FormatMs(all_cost - selected_cost)
         << "; rebuilt with the flags " << FormatMs(rebuilt_cost) << " (" << percent(rebuilt_cost) << " %), saved "
         << FormatMs(all_cost - rebuilt_cost) << "\n";
  WriteOut(report.str());
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
