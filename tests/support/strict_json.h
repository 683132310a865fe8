// A strict little JSON parser for tests that check what the tools write.
// Strict on purpose: it rejects raw control characters in strings, trailing
// commas and trailing text, so it also checks that the output is valid JSON.
#ifndef LIMPWATCH_TESTS_SUPPORT_STRICT_JSON_H_
#define LIMPWATCH_TESTS_SUPPORT_STRICT_JSON_H_

#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace limpwatch::testing {

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;  // a string's value, or a number's literal
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;

  bool Has(std::string_view key) const {
    for (const auto& member : members) {
      if (member.first == key) return true;
    }
    return false;
  }
  const Json& operator[](std::string_view key) const {
    static const Json kMissing;
    for (const auto& member : members) {
      if (member.first == key) return member.second;
    }
    ADD_FAILURE() << "JSON has no key '" << key << "'";
    return kMissing;
  }
  const Json& operator[](size_t index) const {
    static const Json kMissing;
    if (index < items.size()) return items[index];
    ADD_FAILURE() << "JSON array has no index " << index;
    return kMissing;
  }
  uint64_t AsUint() const {
    EXPECT_EQ(kind, Kind::kNumber) << "not a number";
    EXPECT_EQ(text.find_first_not_of("0123456789"), std::string::npos) << "not an unsigned integer: " << text;
    return std::strtoull(text.c_str(), nullptr, 10);
  }
  double AsDouble() const {
    EXPECT_EQ(kind, Kind::kNumber) << "not a number";
    return std::strtod(text.c_str(), nullptr);
  }
  const std::string& AsString() const {
    EXPECT_EQ(kind, Kind::kString) << "not a string";
    return text;
  }
  bool AsBool() const {
    EXPECT_EQ(kind, Kind::kBool) << "not a bool";
    return boolean;
  }
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  bool Parse(Json* out, std::string* error) {
    SkipSpace();
    if (!Value(out)) {
      *error = "bad JSON at offset " + std::to_string(at_);
      return false;
    }
    SkipSpace();
    if (at_ != text_.size()) {
      *error = "trailing text at offset " + std::to_string(at_);
      return false;
    }
    return true;
  }

 private:
  void SkipSpace() {
    while (at_ < text_.size() && std::string_view(" \n\r\t").find(text_[at_]) != std::string_view::npos) ++at_;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  bool Value(Json* out) {
    if (at_ >= text_.size()) return false;
    char c = text_[at_];
    if (c == '{') return Object(out);
    if (c == '[') return Array(out);
    if (c == '"') {
      out->kind = Json::Kind::kString;
      return String(&out->text);
    }
    if (Literal("true")) {
      out->kind = Json::Kind::kBool;
      out->boolean = true;
      return true;
    }
    if (Literal("false")) {
      out->kind = Json::Kind::kBool;
      return true;
    }
    if (Literal("null")) return true;
    return Number(out);
  }
  bool Number(Json* out) {
    static const std::regex kNumber(R"(^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
    std::match_results<std::string_view::const_iterator> match;
    // Anchored at the cursor: a search would try every later offset of a long document too.
    if (!std::regex_search(text_.begin() + at_, text_.end(), match, kNumber, std::regex_constants::match_continuous)) {
      return false;
    }
    out->kind = Json::Kind::kNumber;
    out->text = match.str();
    at_ += out->text.size();
    return !out->text.empty();
  }
  static void AppendUtf8(uint32_t code_point, std::string* out) {
    if (code_point < 0x80) {
      out->push_back(static_cast<char>(code_point));
    } else if (code_point < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (code_point >> 6)));
      out->push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
    } else if (code_point < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (code_point >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (code_point >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code_point & 0x3f)));
    }
  }
  bool Hex4(uint32_t* out) {
    if (at_ + 4 > text_.size()) return false;
    *out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[at_++];
      *out <<= 4;
      if (c >= '0' && c <= '9') {
        *out |= uint32_t(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        *out |= uint32_t(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        *out |= uint32_t(c - 'A' + 10);
      } else {
        return false;
      }
    }
    return true;
  }
  bool String(std::string* out) {
    ++at_;  // opening quote
    out->clear();
    while (at_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[at_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;  // raw control characters are not allowed in JSON strings
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      if (at_ >= text_.size()) return false;
      char escape = text_[at_++];
      switch (escape) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          uint32_t code_point = 0;
          if (!Hex4(&code_point)) return false;
          if (code_point >= 0xd800 && code_point <= 0xdbff) {
            uint32_t low = 0;
            if (!Literal("\\u") || !Hex4(&low) || low < 0xdc00 || low > 0xdfff) return false;
            code_point = 0x10000 + ((code_point - 0xd800) << 10) + (low - 0xdc00);
          }
          AppendUtf8(code_point, out);
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool Array(Json* out) {
    out->kind = Json::Kind::kArray;
    ++at_;
    SkipSpace();
    if (Literal("]")) return true;
    for (;;) {
      Json item;
      SkipSpace();
      if (!Value(&item)) return false;
      out->items.push_back(std::move(item));
      SkipSpace();
      if (Literal("]")) return true;
      if (!Literal(",")) return false;
    }
  }
  bool Object(Json* out) {
    out->kind = Json::Kind::kObject;
    ++at_;
    SkipSpace();
    if (Literal("}")) return true;
    for (;;) {
      SkipSpace();
      if (at_ >= text_.size() || text_[at_] != '"') return false;
      std::string key;
      if (!String(&key)) return false;
      SkipSpace();
      if (!Literal(":")) return false;
      SkipSpace();
      Json value;
      if (!Value(&value)) return false;
      out->members.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (Literal("}")) return true;
      if (!Literal(",")) return false;
    }
  }

  std::string_view text_;
  size_t at_ = 0;
};

inline ::testing::AssertionResult ParseJson(const std::string& text, Json* out) {
  std::string error;
  if (!JsonParser(text).Parse(out, &error)) {
    return ::testing::AssertionFailure() << error << " in:\n" << text;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_STRICT_JSON_H_
