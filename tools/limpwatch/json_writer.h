// A minimal streaming JSON writer.
//
// limpwatch has no JSON dependency; this writes exactly what `list --json`
// and `dump --json` need, and always valid JSON (RFC 8259): strings are
// escaped and made valid UTF-8, non-finite doubles become null, and commas are
// placed by the writer, not the caller.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_JSON_WRITER_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace limpwatch::cli {

class JsonWriter {
 public:
  // indent 0 writes everything on one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();

  // Inside an object, every value is preceded by its Key().
  void Key(std::string_view key);

  void String(std::string_view value);
  void Uint(uint64_t value);
  void Int(int64_t value);
  void Double(double value);
  void Bool(bool value);
  void Null();

  // Key() followed by the value, the common case in objects.
  void Field(std::string_view key, std::string_view value) { Key(key); String(value); }
  void Field(std::string_view key, const char* value) { Key(key); String(value); }
  void Field(std::string_view key, uint64_t value) { Key(key); Uint(value); }
  void Field(std::string_view key, uint32_t value) { Key(key); Uint(value); }
  void Field(std::string_view key, int value) { Key(key); Int(value); }
  void Field(std::string_view key, double value) { Key(key); Double(value); }
  void Field(std::string_view key, bool value) { Key(key); Bool(value); }

  // A string field that is null when `value` is empty (e.g. a time never set).
  void FieldOrNull(std::string_view key, std::string_view value) {
    Key(key);
    if (value.empty()) {
      Null();
    } else {
      String(value);
    }
  }

  // The document so far; complete once every Begin has its End.
  const std::string& str() const { return out_; }

  // `text` as a JSON string literal, quotes included.
  static std::string Quote(std::string_view text);

 private:
  struct Level {
    bool is_object;
    bool empty;
  };

  void BeforeValue();
  void NewLine();
  void Close(char bracket);

  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
  int indent_;
};

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_JSON_WRITER_H_
