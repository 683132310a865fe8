// limpwatch select: proposes what to trace from a recorded profile.
//
// The rule, with every threshold an option:
//   a function carries diagnostic weight when, in some window of some
//   profile, it was called at least --min-calls times or ran at least
//   --min-seconds (total time; seed 000, section 7.3), or when a rule of the
//   PVFS resource manifest (--manifest) names it;
//   its tracing cost dominates when calls x --cost-ns, summed over all
//   windows, exceeds --max-cost-percent of its own (self) time.
// Kept: weight and no dominating cost, within a budget: when the kept
// functions together would cost more than --budget-percent of the program's
// run time, the one whose cost is the largest share of its own time goes
// first, and so on until the rest fits (a function the resource manifest
// names is never dropped for the budget). The run time is the recorded self
// time less what the traced calls of the profile cost: a profile recorded
// with everything traced contains that cost, and a selection is for runs
// without it. The output is a LIMPWATCH_SELECT
// manifest of the kept functions (the rest stays untraced) and GCC flags that
// leave the dropped functions uninstrumented in a rebuild.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/shm/layout.h"
#include "output.h"
#include "select_profile.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kSelectOptions[] = {
    {"--help", "-h", false},          {"--live", "", true},           {"--seconds", "", true},
    {"--window", "", true},           {"--manifest", "-m", true},     {"--min-calls", "", true},
    {"--min-seconds", "", true},      {"--cost-ns", "", true},        {"--unselected-cost-ns", "", true},
    {"--max-cost-percent", "", true}, {"--budget-percent", "", true}, {"--output", "-o", true},
    {"--gcc-flags", "", true},
};

struct Thresholds {
  uint64_t min_calls = 100;
  double min_seconds = 1.0;
  // hotpath_benchmark on our 2-core VMs: a traced call 50-68 ns, an
  // unselected one 7-8.5 ns (about 0.3 ns once its hook calls are patched).
  double cost_ns = 60.0;
  double unselected_cost_ns = 8.0;
  double max_cost_percent = 10.0;
  double budget_percent = 2.0;
};

struct Verdict {
  std::string name;
  uint64_t calls = 0;  // over all windows
  double self_ns = 0;
  bool weighty = false;
  bool named = false;
  bool costly = false;
  bool over_budget = false;
  bool kept() const { return (weighty || named) && !costly && !over_budget; }
  double cost_ns(const Thresholds& thresholds) const { return double(calls) * thresholds.cost_ns; }
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
         seconds("--max-cost-percent", &out->max_cost_percent) && seconds("--budget-percent", &out->budget_percent);
}

// The program's own run time in the profile: its recorded self time less
// what tracing each recorded call cost (never below a tenth of the record).
double UntracedRunNs(const std::vector<Verdict>& verdicts, const Thresholds& thresholds) {
  double self_ns = 0, cost_ns = 0;
  for (const Verdict& verdict : verdicts) {
    self_ns += verdict.self_ns;
    cost_ns += verdict.cost_ns(thresholds);
  }
  return std::max(self_ns - cost_ns, self_ns / 10);
}

// Drops kept functions, largest cost share of their own time first, until
// the kept ones cost at most the budget.
void FitBudget(std::vector<Verdict>* verdicts, const Thresholds& thresholds) {
  double budget_ns = thresholds.budget_percent / 100.0 * UntracedRunNs(*verdicts, thresholds);
  double kept_ns = 0;
  std::vector<Verdict*> droppable;
  for (Verdict& verdict : *verdicts) {
    if (!verdict.kept()) continue;
    kept_ns += verdict.cost_ns(thresholds);
    if (!verdict.named) droppable.push_back(&verdict);
  }
  auto share = [&](const Verdict* verdict) {
    return verdict->self_ns > 0 ? verdict->cost_ns(thresholds) / verdict->self_ns : 1e300;
  };
  std::stable_sort(droppable.begin(), droppable.end(),
                   [&](const Verdict* a, const Verdict* b) { return share(a) > share(b); });
  for (Verdict* verdict : droppable) {
    if (kept_ns <= budget_ns) break;
    verdict->over_budget = true;
    kept_ns -= verdict->cost_ns(thresholds);
  }
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
    verdict.costly = verdict.cost_ns(thresholds) > thresholds.max_cost_percent / 100.0 * verdict.self_ns;
    result.push_back(verdict);
  }
  FitBudget(&result, thresholds);
  return result;
}

// The LIMPWATCH_SELECT pattern that matches exactly this function. Rules are
// fnmatch globs, and C++ names hold glob characters ("Path[abi:cxx11]",
// "operator*"): escaped, they match themselves. A name the segment cut at
// its length limit ends in '*', so it matches the whole name it came from
// (and any other that starts with the same 103 characters).
std::string SelectionPatternFor(const std::string& name) {
  std::string pattern;
  pattern.reserve(name.size() + 8);
  for (char c : name) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
    pattern += c;
  }
  if (name.size() >= shm::kSymbolNameSize - 1) pattern += '*';
  return pattern;
}

std::string RenderManifest(const std::vector<Verdict>& verdicts, const Thresholds& thresholds) {
  std::ostringstream text;
  text << "# Written by 'limpwatch select' (LIMPWATCH_SELECT syntax: include rules;\n"
       << "# a function not listed is not traced). Kept: >= " << thresholds.min_calls << " calls or >= "
       << thresholds.min_seconds << " s in some window, or named by the manifest,\n"
       << "# and calls x " << thresholds.cost_ns << " ns <= " << thresholds.max_cost_percent << " % of self time,\n"
       << "# all of them together <= " << thresholds.budget_percent << " % of the run time.\n";
  for (const Verdict& verdict : verdicts) {
    if (verdict.kept()) text << "include " << SelectionPatternFor(verdict.name) << "\n";
  }
  for (const Verdict& verdict : verdicts) {
    if (verdict.over_budget) text << "# over the budget: " << verdict.name << "\n";
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

  double all_cost = 0, selected_cost = 0, rebuilt_cost = 0;
  size_t kept = 0;
  for (const Verdict& verdict : verdicts) {
    double calls = double(verdict.calls);
    all_cost += calls * thresholds.cost_ns;
    selected_cost += calls * (verdict.kept() ? thresholds.cost_ns : thresholds.unselected_cost_ns);
    rebuilt_cost += verdict.kept() ? calls * thresholds.cost_ns : 0;
    kept += verdict.kept() ? 1 : 0;
  }
  double run_ns = UntracedRunNs(verdicts, thresholds);

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
  auto percent = [&](double ns) { return run_ns > 0 ? 100.0 * ns / run_ns : 0.0; };
  report << "kept " << kept << " of " << verdicts.size() << " functions called in " << windows.size()
         << " window(s)\n";
  report.precision(2);
  report << std::fixed;
  report << "estimated tracing cost: everything " << FormatMs(all_cost) << " (" << percent(all_cost)
         << " % of the untraced run time); with the manifest " << FormatMs(selected_cost) << " ("
         << percent(selected_cost) << " %), saved " << FormatMs(all_cost - selected_cost)
         << "; rebuilt with the flags " << FormatMs(rebuilt_cost) << " (" << percent(rebuilt_cost) << " %), saved "
         << FormatMs(all_cost - rebuilt_cost) << "\n";
  WriteOut(report.str());
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
