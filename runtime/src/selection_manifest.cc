#include "selection_manifest.h"

#include <fnmatch.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace limpwatch::runtime {
namespace {

constexpr size_t kMaxPatternLength = 4096;

std::string_view Trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// fnmatch treats an unterminated '[' as a literal, which would make a typo
// silently match nothing: refuse it instead.
bool BracketsBalanced(std::string_view pattern) {
  for (size_t index = 0; index < pattern.size(); ++index) {
    if (pattern[index] == '\\') {
      ++index;
    } else if (pattern[index] == '[') {
      size_t close = pattern.find(']', index + 2);
      if (close == std::string_view::npos) return false;
      index = close;
    }
  }
  return true;
}

bool ParseRule(std::string_view line, SelectionRule* rule, std::string* reason) {
  std::string_view pattern = line;
  size_t space = line.find_first_of(" \t");
  std::string_view first = line.substr(0, space);
  if (first == "include" || first == "exclude" || first == "request") {
    rule->include = first != "exclude";
    rule->request = first == "request";
    pattern = space == std::string_view::npos ? std::string_view{} : Trim(line.substr(space));
    if (pattern.empty()) {
      *reason = "'" + std::string(first) + "' needs a pattern";
      return false;
    }
  } else if (space != std::string_view::npos) {
    *reason = "unknown keyword '" + std::string(first) + "' (expected include, exclude, request or a single pattern)";
    return false;
  }
  rule->target = RuleTarget::kName;
  size_t colon = pattern.find(':');
  // "ns::f" is a C++ name, not a prefix.
  if (colon != std::string_view::npos && colon > 0 && pattern.substr(colon, 2) != "::") {
    std::string_view prefix = pattern.substr(0, colon);
    if (prefix == "file") {
      rule->target = RuleTarget::kFile;
    } else if (prefix == "object") {
      rule->target = RuleTarget::kObject;
    } else {
      *reason = "unknown prefix '" + std::string(prefix) + ":' (expected file: or object:)";
      return false;
    }
    pattern = pattern.substr(colon + 1);
    if (pattern.empty()) {
      *reason = "'" + std::string(prefix) + ":' needs a pattern";
      return false;
    }
  }
  if (pattern.size() > kMaxPatternLength) {
    *reason = "pattern longer than " + std::to_string(kMaxPatternLength) + " characters";
    return false;
  }
  if (!BracketsBalanced(pattern)) {
    *reason = "unterminated '[' in pattern '" + std::string(pattern) + "'";
    return false;
  }
  rule->pattern = std::string(pattern);
  return true;
}

// Copies short texts to the stack: a named scope is registered on a traced
// thread, where allocating is best avoided.
bool Matches(const std::string& pattern, std::string_view text) {
  if (text.empty()) return false;
  char buffer[512];
  if (text.size() < sizeof buffer) {
    std::memcpy(buffer, text.data(), text.size());
    buffer[text.size()] = '\0';
    return fnmatch(pattern.c_str(), buffer, 0) == 0;
  }
  return fnmatch(pattern.c_str(), std::string(text).c_str(), 0) == 0;
}

// A path pattern without '/' is compared with the basename.
bool MatchesPath(const std::string& pattern, std::string_view path) {
  if (Matches(pattern, path)) return true;
  if (pattern.find('/') != std::string::npos) return false;
  size_t slash = path.rfind('/');
  return slash != std::string_view::npos && Matches(pattern, path.substr(slash + 1));
}

}  // namespace

bool ParseSelectionManifest(std::string_view text, const std::string& origin, SelectionManifest* out,
                            std::string* error) {
  SelectionManifest manifest;
  size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    SelectionRule rule;
    std::string reason;
    if (!ParseRule(line, &rule, &reason)) {
      *error = origin + ":" + std::to_string(line_number) + ": " + reason;
      return false;
    }
    manifest.has_include = manifest.has_include || (rule.include && !rule.request);
    manifest.has_request = manifest.has_request || rule.request;
    manifest.rules.push_back(std::move(rule));
  }
  *out = std::move(manifest);
  return true;
}

bool LoadSelectionManifest(const std::string& path, SelectionManifest* out, std::string* error) {
  std::ifstream file(path);
  if (!file) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  return ParseSelectionManifest(text.str(), path, out, error);
}

namespace {

bool RuleMatches(const SelectionRule& rule, const FunctionFacts& facts) {
  switch (rule.target) {
    case RuleTarget::kName:
      return Matches(rule.pattern, facts.raw_name) ||
             (facts.display_name != facts.raw_name && Matches(rule.pattern, facts.display_name));
    case RuleTarget::kFile:
      return MatchesPath(rule.pattern, facts.source_file);
    case RuleTarget::kObject:
      return MatchesPath(rule.pattern, facts.object_path);
  }
  return false;
}

}  // namespace

bool IsSelected(const SelectionManifest& manifest, const FunctionFacts& facts) {
  for (auto rule = manifest.rules.rbegin(); rule != manifest.rules.rend(); ++rule) {
    if (!rule->request && RuleMatches(*rule, facts)) return rule->include;
  }
  return !manifest.has_include;
}

bool IsRequestRoot(const SelectionManifest& manifest, const FunctionFacts& facts) {
  if (!manifest.has_request) return false;
  for (const SelectionRule& rule : manifest.rules) {
    if (rule.request && RuleMatches(rule, facts)) return true;
  }
  return false;
}

}  // namespace limpwatch::runtime
