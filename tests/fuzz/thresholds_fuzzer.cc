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

size_t LineCount(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

bool NamesALine(const std::string& problem, const std::string& path, size_t lines) {
  if (problem.compare(0, path.size() + 1, path + ":") != 0) return false;
  size_t at = path.size() + 1;
  size_t line = 0;
  size_t digits = 0;
  while (at < problem.size() && std::isdigit(static_cast<unsigned char>(problem[at])) && digits < 12) {
    line = line * 10 + static_cast<size_t>(problem[at++] - '0');
    ++digits;
  }
  return digits > 0 && line >= 1 && line <= lines;
}

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
    Check(NamesALine(problem, path, LineCount(text)), "a problem names the file and a line of it");
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
