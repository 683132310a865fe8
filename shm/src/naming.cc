#include <charconv>

#include "limpwatch/shm/segment.h"

namespace limpwatch::shm {
namespace {

// Dots are allowed: PVFS aliases are often host names ("node1.cluster") or
// "127.0.0.1_tcp3334". The pid is split off at the last dot.
bool IsNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<pid_t> ParsePid(std::string_view text) {
  if (!AllDigits(text) || text.size() > 9) return std::nullopt;
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || end != text.data() + text.size() || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace

bool IsValidSegmentName(std::string_view name) {
  if (name.empty() || name.size() >= kNameSize) return false;
  for (char c : name) {
    if (!IsNameCharacter(c)) return false;
  }
  return !AllDigits(name) && name.front() != '.' && name.back() != '.';
}

std::string SegmentObjectName(std::string_view name, pid_t pid) {
  std::string object(kObjectPrefix);
  if (!name.empty()) {
    object.append(name);
    object.push_back('.');
  }
  object.append(std::to_string(pid));
  return object;
}

std::optional<ObjectNameParts> ParseSegmentObjectName(std::string_view object_name) {
  if (object_name.substr(0, kObjectPrefix.size()) != kObjectPrefix) return std::nullopt;
  std::string_view rest = object_name.substr(kObjectPrefix.size());
  ObjectNameParts parts;
  size_t dot = rest.rfind('.');
  std::string_view pid_text = rest;
  if (dot != std::string_view::npos) {
    std::string_view name = rest.substr(0, dot);
    if (!IsValidSegmentName(name)) return std::nullopt;
    parts.name = std::string(name);
    pid_text = rest.substr(dot + 1);
  }
  auto pid = ParsePid(pid_text);
  if (!pid) return std::nullopt;
  parts.pid = *pid;
  return parts;
}

}  // namespace limpwatch::shm
