// A strict reader of the Prometheus text format, for the tests: it parses
// what `limpwatch serve` writes and lists every rule of the format the text
// breaks (a sample before its TYPE, a family split in two, a series twice,
// a family whose series do not share one set of label names, a bad escape).
#ifndef LIMPWATCH_TESTS_SERVE_EXPOSITION_PARSER_H_
#define LIMPWATCH_TESTS_SERVE_EXPOSITION_PARSER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace limpwatch::testing {

struct ParsedSeries {
  std::string family;
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0;
};

struct ParsedExposition {
  std::vector<std::string> problems;          // empty when the text follows the format
  std::map<std::string, std::string> types;   // family -> counter / gauge / ...
  std::map<std::string, ParsedSeries> series;  // by SeriesKey
  std::vector<std::string> order;             // series keys in the order written

  // Series of a family whose labels include every label given.
  std::vector<ParsedSeries> Find(const std::string& family,
                                 const std::map<std::string, std::string>& labels = {}) const;
  // The value of the one series matching, or nullopt (none, or several).
  std::optional<double> Value(const std::string& family, const std::map<std::string, std::string>& labels = {}) const;
};

// `family{a="x",b="y"}` with labels sorted by name: one key per series.
std::string SeriesKey(const std::string& family, const std::map<std::string, std::string>& labels);

ParsedExposition ParseExposition(const std::string& text);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SERVE_EXPOSITION_PARSER_H_
