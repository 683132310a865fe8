#include "json_writer.h"

#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "format.h"

namespace limpwatch::cli {
namespace {

constexpr std::string_view kReplacementCharacter = "\xef\xbf\xbd";  // U+FFFD

}  // namespace

std::string JsonWriter::Quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
      ++i;
      continue;
    }
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      // Symbol names are bytes from a segment; JSON must be UTF-8, so a bad
      // byte becomes U+FFFD rather than making the whole document unreadable.
      out += kReplacementCharacter;
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  out.push_back('"');
  return out;
}

void JsonWriter::NewLine() {
  if (indent_ <= 0) return;
  out_.push_back('\n');
  out_.append(levels_.size() * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  assert(!level.is_object && "a value inside an object needs a Key() first");
  if (!level.empty) out_.push_back(',');
  level.empty = false;
  NewLine();
}

void JsonWriter::Key(std::string_view key) {
  assert(!levels_.empty() && levels_.back().is_object && !after_key_);
  Level& level = levels_.back();
  if (!level.empty) out_.push_back(',');
  level.empty = false;
  NewLine();
  out_ += Quote(key);
  out_ += indent_ > 0 ? ": " : ":";
  after_key_ = true;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  levels_.push_back({true, true});
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  levels_.push_back({false, true});
}

void JsonWriter::Close(char bracket) {
  assert(!levels_.empty() && !after_key_);
  bool empty = levels_.back().empty;
  levels_.pop_back();
  if (!empty) NewLine();
  out_.push_back(bracket);
  if (levels_.empty() && indent_ > 0) out_.push_back('\n');
}

void JsonWriter::EndObject() {
  assert(levels_.back().is_object);
  Close('}');
}

void JsonWriter::EndArray() {
  assert(!levels_.back().is_object);
  Close(']');
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_ += Quote(value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    // JSON has no NaN or Infinity.
    out_ += "null";
    return;
  }
  char text[32];
  // Shortest text that reads back as the same double.
  auto [end, error] = std::to_chars(text, text + sizeof text, value);
  if (error != std::errc()) {
    out_ += "null";
    return;
  }
  out_.append(text, end);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace limpwatch::cli
