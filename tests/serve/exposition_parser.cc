#include "serve/exposition_parser.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

namespace limpwatch::testing {
namespace {

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool IsNameChar(char c) { return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

bool ReadName(const std::string& line, size_t* position, std::string* name) {
  size_t start = *position;
  if (start >= line.size() || !IsNameStart(line[start])) return false;
  size_t end = start + 1;
  while (end < line.size() && IsNameChar(line[end])) ++end;
  *name = line.substr(start, end - start);
  *position = end;
  return true;
}

bool ParseValue(const std::string& text, double* value) {
  if (text == "NaN" || text == "+Inf" || text == "-Inf") {
    *value = text == "NaN" ? std::nan("") : (text[0] == '+' ? HUGE_VAL : -HUGE_VAL);
    return true;
  }
  if (text.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

}  // namespace

std::string SeriesKey(const std::string& family, const std::map<std::string, std::string>& labels) {
  std::string key = family + "{";
  bool first = true;
  for (const auto& [name, value] : labels) {
    key += (first ? "" : ",") + name + "=\"" + value + "\"";
    first = false;
  }
  return key + "}";
}

std::vector<ParsedSeries> ParsedExposition::Find(const std::string& family,
                                                 const std::map<std::string, std::string>& labels) const {
  std::vector<ParsedSeries> found;
  for (const auto& [key, entry] : series) {
    if (entry.family != family) continue;
    bool matches = true;
    for (const auto& [name, value] : labels) {
      auto label = entry.labels.find(name);
      if (label == entry.labels.end() || label->second != value) matches = false;
    }
    if (matches) found.push_back(entry);
  }
  return found;
}

std::optional<double> ParsedExposition::Value(const std::string& family,
                                              const std::map<std::string, std::string>& labels) const {
  std::vector<ParsedSeries> found = Find(family, labels);
  if (found.size() != 1) return std::nullopt;
  return found.front().value;
}

ParsedExposition ParseExposition(const std::string& text) {
  ParsedExposition parsed;
  std::set<std::string> helped;
  std::set<std::string> finished;  // families whose samples have ended
  std::map<std::string, std::set<std::string>> label_names;  // family -> its label names, joined
  std::string current;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  auto problem = [&](const std::string& what) {
    parsed.problems.push_back("line " + std::to_string(number) + ": " + what + ": " + line);
  };
  if (!text.empty() && text.back() != '\n') parsed.problems.push_back("the text does not end with a newline");
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty()) {
      problem("empty line");
      continue;
    }
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, keyword, family;
      words >> hash >> keyword >> family;
      if (keyword == "HELP") {
        if (!helped.insert(family).second) problem("second HELP");
      } else if (keyword == "TYPE") {
        std::string type;
        words >> type;
        if (parsed.types.count(family)) problem("second TYPE");
        if (type != "counter" && type != "gauge" && type != "untyped") problem("unexpected type");
        parsed.types[family] = type;
      }
      continue;
    }
    ParsedSeries series;
    size_t position = 0;
    if (!ReadName(line, &position, &series.family)) {
      problem("bad metric name");
      continue;
    }
    if (!parsed.types.count(series.family)) problem("sample before its TYPE");
    if (series.family != current) {
      if (!current.empty()) finished.insert(current);
      if (finished.count(series.family)) problem("family split in two");
      current = series.family;
    }
    std::string names;
    if (position < line.size() && line[position] == '{') {
      ++position;
      while (position < line.size() && line[position] != '}') {
        std::string name;
        if (!ReadName(line, &position, &name) || position + 1 >= line.size() || line[position] != '=' ||
            line[position + 1] != '"') {
          problem("bad label");
          break;
        }
        position += 2;
        std::string value;
        bool closed = false;
        while (position < line.size()) {
          char c = line[position++];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c == '\\') {
            if (position >= line.size()) break;
            char escaped = line[position++];
            if (escaped == 'n') {
              value += '\n';
            } else if (escaped == '\\' || escaped == '"') {
              value += escaped;
            } else {
              problem("bad escape");
            }
          } else {
            value += c;
          }
        }
        if (!closed) {
          problem("unterminated label value");
          break;
        }
        if (series.labels.count(name)) problem("label twice");
        series.labels[name] = value;
        names += name + ",";
        if (position < line.size() && line[position] == ',') ++position;
      }
      if (position >= line.size() || line[position] != '}') {
        problem("unterminated labels");
        continue;
      }
      ++position;
    }
    if (position >= line.size() || line[position] != ' ') {
      problem("no space before the value");
      continue;
    }
    std::string value_text = line.substr(position + 1);
    if (value_text.find(' ') != std::string::npos) problem("a timestamp or trailing text");
    if (!ParseValue(value_text.substr(0, value_text.find(' ')), &series.value)) problem("bad value");
    label_names[series.family].insert(names);
    if (label_names[series.family].size() > 1) problem("label names differ within the family");
    std::string key = SeriesKey(series.family, series.labels);
    if (parsed.series.count(key)) problem("duplicate series");
    parsed.order.push_back(key);
    parsed.series[key] = std::move(series);
  }
  return parsed;
}

}  // namespace limpwatch::testing
