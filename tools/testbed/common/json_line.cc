#include "common/json_line.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace limpwatch::testbed {

std::string JsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out;
}

void JsonLine::Key(std::string_view key) {
  if (!body_.empty()) body_ += ",";
  body_ += "\"" + JsonEscape(key) + "\":";
}

JsonLine& JsonLine::Add(std::string_view key, std::string_view value) {
  Key(key);
  body_ += "\"" + JsonEscape(value) + "\"";
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, int64_t value) {
  Key(key);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, uint64_t value) {
  Key(key);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, double value) {
  Key(key);
  if (!std::isfinite(value)) {
    body_ += "null";
  } else {
    char text[64];
    std::snprintf(text, sizeof text, "%.3f", value);
    body_ += text;
  }
  return *this;
}

JsonLine& JsonLine::Add(std::string_view key, bool value) {
  Key(key);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::AddRaw(std::string_view key, std::string_view json) {
  Key(key);
  body_ += json;
  return *this;
}

void EmitJsonLine(const JsonLine& line) {
  std::string text = line.str() + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

namespace {

// Position just after `"key":` at the top level of a flat line, or npos.
size_t FindValue(std::string_view line, std::string_view key) {
  std::string pattern = "\"" + std::string(key) + "\":";
  size_t at = line.find(pattern);
  return at == std::string_view::npos ? at : at + pattern.size();
}

}  // namespace

std::optional<double> JsonNumberField(std::string_view line, std::string_view key) {
  size_t at = FindValue(line, key);
  if (at == std::string_view::npos || at >= line.size()) return std::nullopt;
  std::string rest(line.substr(at, 64));
  char* end = nullptr;
  double value = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str()) return std::nullopt;
  return value;
}

std::optional<std::string> JsonStringField(std::string_view line, std::string_view key) {
  size_t at = FindValue(line, key);
  if (at == std::string_view::npos || at >= line.size() || line[at] != '"') return std::nullopt;
  std::string value;
  for (size_t i = at + 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      value += line[++i];
    } else if (line[i] == '"') {
      return value;
    } else {
      value += line[i];
    }
  }
  return std::nullopt;
}

}  // namespace limpwatch::testbed
