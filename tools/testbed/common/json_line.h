// One JSON object per line: the machine-readable output of every test-bed
// program (progress of a workload, a probe's figures, an injector's
// evidence). Flat objects only; nested values go in through AddRaw.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_JSON_LINE_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_JSON_LINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace limpwatch::testbed {

class JsonLine {
 public:
  JsonLine& Add(std::string_view key, std::string_view value);
  JsonLine& Add(std::string_view key, const char* value) { return Add(key, std::string_view(value)); }
  JsonLine& Add(std::string_view key, const std::string& value) { return Add(key, std::string_view(value)); }
  JsonLine& Add(std::string_view key, int64_t value);
  JsonLine& Add(std::string_view key, uint64_t value);
  JsonLine& Add(std::string_view key, int value) { return Add(key, int64_t{value}); }
  JsonLine& Add(std::string_view key, uint32_t value) { return Add(key, uint64_t{value}); }
  JsonLine& Add(std::string_view key, double value);  // 3 decimals; non-finite -> null
  JsonLine& Add(std::string_view key, bool value);
  // `json` must already be valid JSON (an array or object built elsewhere).
  JsonLine& AddRaw(std::string_view key, std::string_view json);

  bool empty() const { return body_.empty(); }
  std::string str() const { return "{" + body_ + "}"; }
  // The fields without braces, to merge into another line.
  const std::string& fields() const { return body_; }

 private:
  void Key(std::string_view key);
  std::string body_;
};

std::string JsonEscape(std::string_view text);

// Writes line + '\n' to stdout and flushes: readers follow the output live.
void EmitJsonLine(const JsonLine& line);

// Reads a top-level number or string field from a flat JSON line written by
// JsonLine. nullopt when absent (or null).
std::optional<double> JsonNumberField(std::string_view line, std::string_view key);
std::optional<std::string> JsonStringField(std::string_view line, std::string_view key);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_JSON_LINE_H_
