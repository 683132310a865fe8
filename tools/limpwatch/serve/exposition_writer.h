// The Prometheus text exposition format (version 0.0.4), written.
//
// A family is declared once with its type, help and label names; every
// sample of it gives one value per label name, so a family's label set
// cannot vary from one series to the next. Families are rendered in the
// order they were declared, each with its HELP and TYPE lines once and its
// samples together, as the format requires. A second sample with the same
// label values is refused (Add returns false): a series appears once.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_EXPOSITION_WRITER_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_EXPOSITION_WRITER_H_

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace limpwatch::cli::serve {

enum class MetricType { kCounter, kGauge };

// The content type of what Render() writes.
inline constexpr std::string_view kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

class MetricFamily {
 public:
  MetricFamily(std::string name, MetricType type, std::string help, std::vector<std::string> label_names);

  // One series. `label_values` has one value per label name, in order (a
  // mismatch is a programming error and throws std::logic_error). Returns
  // false, adding nothing, when a series with these values is already there.
  bool Add(const std::vector<std::string>& label_values, uint64_t value);
  bool Add(const std::vector<std::string>& label_values, double value);

  // HELP, TYPE and the samples; nothing for a family without samples.
  void RenderTo(std::string* out) const;

 private:
  struct Sample {
    std::string labels;  // rendered: {a="x",b="y"} or empty
    std::variant<uint64_t, double> value;
  };
  bool AddRendered(const std::vector<std::string>& label_values, std::variant<uint64_t, double> value);

  std::string name_;
  MetricType type_;
  std::string help_;
  std::vector<std::string> label_names_;
  std::vector<Sample> samples_;
  std::set<std::string> seen_;
};

class Exposition {
 public:
  // The family of that name, declared now; declaring a name twice is a
  // programming error (std::logic_error). The reference stays valid.
  MetricFamily& Declare(std::string name, MetricType type, std::string help,
                        std::vector<std::string> label_names = {});

  std::string Render() const;

 private:
  std::deque<MetricFamily> families_;
  std::set<std::string> names_;
};

// A label value as the format quotes it: made printable valid UTF-8, then
// backslash and double quote escaped (no newline can remain).
std::string EscapeLabelValue(std::string_view value);

// A sample value: integers exactly, other numbers in the shortest form that
// reads back the same; NaN, +Inf and -Inf as the format spells them.
std::string FormatSampleValue(double value);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_EXPOSITION_WRITER_H_
