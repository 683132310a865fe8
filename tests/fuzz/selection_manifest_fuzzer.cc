// Fuzz target for the selection manifest (LIMPWATCH_SELECT,
// runtime/src/selection_manifest.h).
//
// Invariants, for every input:
//   - a refusal names the origin and a line the text has;
//   - an accepted manifest has non-empty patterns and says it has include
//     rules exactly when one of its selecting rules includes, and request
//     rules exactly when one is a `request` rule;
//   - written back as "include|exclude|request [file:|object:]<pattern>"
//     lines, it parses to the same rules (the parser reads what it describes);
//   - the last selecting rule decides for a function it matches: a glob-free
//     pattern matches its own text, so a function named (and filed, and
//     loaded) as that text is selected exactly when that rule includes; a
//     request rule marks such a function as a request root.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_support.h"
#include "selection_manifest.h"

namespace limpwatch::runtime::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

constexpr const char* kTarget = "selection manifest";
constexpr const char* kOrigin = "fuzz.select";

void Check(bool condition, const char* invariant) { Require(condition, kTarget, invariant); }

// "fuzz.select:<line>: <reason>" with 1 <= line <= the text's lines.
bool NamesALineOfTheText(const std::string& error, const std::string& text) {
  size_t after = 0;
  return limpwatch::fuzzing::NamesALine(error, kOrigin, limpwatch::fuzzing::LineCount(text), &after) &&
         error.compare(after, 2, ": ") == 0;
}

std::string WrittenBack(const SelectionManifest& manifest) {
  std::string text;
  for (const SelectionRule& rule : manifest.rules) {
    text += rule.request ? "request " : rule.include ? "include " : "exclude ";
    if (rule.target == RuleTarget::kFile) text += "file:";
    if (rule.target == RuleTarget::kObject) text += "object:";
    text += rule.pattern + "\n";
  }
  return text;
}

bool SameRules(const SelectionManifest& a, const SelectionManifest& b) {
  if (a.rules.size() != b.rules.size() || a.has_include != b.has_include || a.has_request != b.has_request) {
    return false;
  }
  for (size_t index = 0; index < a.rules.size(); ++index) {
    const SelectionRule& x = a.rules[index];
    const SelectionRule& y = b.rules[index];
    if (x.include != y.include || x.request != y.request || x.target != y.target || x.pattern != y.pattern) {
      return false;
    }
  }
  return true;
}

bool IsGlobFree(const std::string& pattern) { return pattern.find_first_of("*?[\\") == std::string::npos; }

}  // namespace
}  // namespace limpwatch::runtime::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::runtime;
  using namespace limpwatch::runtime::fuzzing;
  const std::string text = limpwatch::fuzzing::Text(std::span(data, size));
  SelectionManifest manifest;
  std::string error;
  if (!ParseSelectionManifest(text, kOrigin, &manifest, &error)) {
    Check(NamesALineOfTheText(error, text), "a refusal names the origin and a line of the text");
    return 0;
  }
  bool any_include = false;
  bool any_request = false;
  for (const SelectionRule& rule : manifest.rules) {
    Check(!rule.pattern.empty(), "an accepted rule has a pattern");
    any_include = any_include || (rule.include && !rule.request);
    any_request = any_request || rule.request;
  }
  Check(manifest.has_include == any_include, "has_include says whether a selecting rule includes");
  Check(manifest.has_request == any_request, "has_request says whether a rule marks requests");

  SelectionManifest again;
  std::string again_error;
  Check(ParseSelectionManifest(WrittenBack(manifest), kOrigin, &again, &again_error),
        "the rules written back parse");
  Check(SameRules(manifest, again), "and parse to the same rules");

  FunctionFacts unknown{"limpwatch_fuzz_unmatched_function", "limpwatch_fuzz_unmatched_function", "", ""};
  IsSelected(manifest, unknown);
  const SelectionRule* last_selecting = nullptr;
  for (const SelectionRule& rule : manifest.rules) {
    if (!rule.request) last_selecting = &rule;
  }
  if (last_selecting != nullptr && IsGlobFree(last_selecting->pattern)) {
    const std::string& pattern = last_selecting->pattern;
    FunctionFacts named{pattern, pattern, pattern, pattern};
    Check(IsSelected(manifest, named) == last_selecting->include,
          "the last selecting rule decides for a function it matches");
  }
  if (!manifest.rules.empty() && manifest.rules.back().request && IsGlobFree(manifest.rules.back().pattern)) {
    const std::string& pattern = manifest.rules.back().pattern;
    FunctionFacts named{pattern, pattern, pattern, pattern};
    Check(IsRequestRoot(manifest, named), "a request rule marks a function it matches");
  }
  return 0;
}
