// Fuzz target for the thresholds file (LIMPWATCH_THRESHOLDS, `limpwatch
// train`'s output; analyzer/thresholds.h), read from a file as the analyzer
// reads it.
//
// Invariants, for every input:
//   - every problem names the file and a line of it;
//   - every value kept is finite, thresholds and spreads non-negative;
//   - what is kept, saved as `train` saves it, loads back without a problem
//     and saves to the same text: a trained file always reads back.
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "limpwatch/analyzer/thresholds.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

void Check(bool condition, const char* invariant) { Require(condition, "thresholds", invariant); }

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer;
  using namespace limpwatch::analyzer::fuzzing;
  static limpwatch::fuzzing::InputFile file;
  const std::string text = limpwatch::fuzzing::Text(std::span(data, size));
  const std::string& path = file.Write(text);

  Thresholds thresholds;
  std::vector<std::string> problems;
  Check(thresholds.Load(path, &problems), "a readable file loads");
  for (const std::string& problem : problems) {
    Check(limpwatch::fuzzing::NamesALine(problem, path, limpwatch::fuzzing::LineCount(text)), "a problem names the file and a line of it");
  }
  for (int index = 0; index < kComparedMetricCount; ++index) {
    auto metric = static_cast<ComparedMetric>(index);
    if (auto spread = thresholds.GetSpread(metric)) {
      Check(std::isfinite(spread->sigma) && spread->sigma >= 0, "a spread is a finite non-negative number");
      Check(std::isfinite(spread->windows) && spread->windows >= 0, "its windows are a finite non-negative number");
    }
    if (auto value = thresholds.Get("*", metric)) {
      Check(std::isfinite(*value) && *value >= 0, "a threshold is a finite non-negative number");
    }
  }
  for (const auto& [key, log_ratio] : thresholds.usual()) {
    Check(std::isfinite(log_ratio), "a usual ratio is finite");
    Check(thresholds.Get(key.first, key.second).value_or(0) >= 0, "a server's threshold is non-negative");
  }

  const std::string saved = thresholds.Format();
  static limpwatch::fuzzing::InputFile saved_file;
  Thresholds reloaded;
  std::vector<std::string> reload_problems;
  Check(reloaded.Load(saved_file.Write(saved), &reload_problems), "the saved file loads");
  Check(reload_problems.empty(), "the saved file loads without a problem");
  Check(reloaded.Format() == saved, "and saves to the same text");
  return 0;
}
