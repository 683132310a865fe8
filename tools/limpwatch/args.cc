#include "args.h"

#include <charconv>
#include <cmath>

namespace limpwatch::cli {
namespace {

const OptionSpec* FindSpec(std::span<const OptionSpec> specs, std::string_view spelling) {
  for (const auto& spec : specs) {
    if (spelling == spec.name || (!spec.short_name.empty() && spelling == spec.short_name)) return &spec;
  }
  return nullptr;
}

}  // namespace

const std::string* ParsedArgs::Value(std::string_view name) const {
  auto found = options.find(name);
  return found == options.end() ? nullptr : &found->second;
}

bool ParseArgs(const std::vector<std::string>& args, std::span<const OptionSpec> specs, ParsedArgs* out,
               std::string* error) {
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg.size() < 2 || arg[0] != '-') {
      out->positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    std::string_view spelling = arg;
    std::string_view attached;
    bool has_attached = false;
    if (arg.starts_with("--")) {
      size_t equals = arg.find('=');
      if (equals != std::string::npos) {
        spelling = std::string_view(arg).substr(0, equals);
        attached = std::string_view(arg).substr(equals + 1);
        has_attached = true;
      }
    } else if (arg.size() > 2) {
      // "-d0.5": a short option with its value glued on.
      spelling = std::string_view(arg).substr(0, 2);
      attached = std::string_view(arg).substr(2);
      has_attached = true;
    }
    const OptionSpec* spec = FindSpec(specs, spelling);
    if (spec == nullptr || (has_attached && !spec->takes_value)) {
      *error = "unknown option '" + arg + "'";
      return false;
    }
    std::string value;
    if (spec->takes_value) {
      if (has_attached) {
        value = std::string(attached);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        *error = "option '" + arg + "' needs a value";
        return false;
      }
    }
    out->options[std::string(spec->name)] = std::move(value);
  }
  return true;
}

bool ParseSeconds(std::string_view text, double* out) {
  if (text.empty()) return false;
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

bool ParseUnsigned(std::string_view text, uint64_t* out) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  *out = value;
  return true;
}

}  // namespace limpwatch::cli
