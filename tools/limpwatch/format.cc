#include "format.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace limpwatch::cli {
namespace {

constexpr uint64_t kNsPerSecond = 1000000000ull;

bool ToLocalTime(uint64_t realtime_ns, tm* out) {
  time_t seconds = static_cast<time_t>(realtime_ns / kNsPerSecond);
  return localtime_r(&seconds, out) != nullptr;
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return FormatFixed(value, value < 10.0 ? 2 : 1) + " " + kUnits[unit];
}

std::string FormatLocalTime(uint64_t realtime_ns, bool with_millis) {
  if (realtime_ns == 0) return "-";
  tm local{};
  if (!ToLocalTime(realtime_ns, &local)) return "-";
  char text[64];
  size_t length = strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  std::string result(text, length);
  if (with_millis) {
    char millis[8];
    std::snprintf(millis, sizeof millis, ".%03u", static_cast<unsigned>(realtime_ns % kNsPerSecond / 1000000));
    result += millis;
  }
  return result;
}

std::string FormatIsoTime(uint64_t realtime_ns) {
  if (realtime_ns == 0) return "";
  tm local{};
  if (!ToLocalTime(realtime_ns, &local)) return "";
  char date[32];
  char zone[16];
  size_t date_length = strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &local);
  size_t zone_length = strftime(zone, sizeof zone, "%z", &local);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03u", static_cast<unsigned>(realtime_ns % kNsPerSecond / 1000000));
  return std::string(date, date_length) + millis + std::string(zone, zone_length);
}

std::string FormatDuration(double ns) {
  if (!std::isfinite(ns)) return "-";
  double magnitude = std::fabs(ns);
  if (magnitude < 1e3) return FormatFixed(ns, 0) + " ns";
  if (magnitude < 1e6) return FormatFixed(ns / 1e3, magnitude < 1e4 ? 2 : 1) + " us";
  if (magnitude < 1e9) return FormatFixed(ns / 1e6, magnitude < 1e7 ? 2 : 1) + " ms";
  return FormatFixed(ns / 1e9, 2) + " s";
}

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  char text[64];
  int length = std::snprintf(text, sizeof text, "%.*f", decimals, value);
  if (length < 0) return "-";
  // Huge values do not fit: fall back to exponent notation rather than cut digits.
  if (static_cast<size_t>(length) >= sizeof text) {
    std::snprintf(text, sizeof text, "%.*e", decimals, value);
  }
  return text;
}

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

std::string FormatHex16(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string FormatAddress(uint64_t address) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

size_t Utf8SequenceLength(std::string_view text, size_t start) {
  auto byte = [&](size_t index) { return static_cast<unsigned char>(text[index]); };
  unsigned char lead = byte(start);
  size_t length;
  uint32_t code_point;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code_point = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code_point = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (start + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(start + k) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(start + k) & 0x3f);
  }
  if (length == 3 && (code_point < 0x800 || (code_point >= 0xd800 && code_point <= 0xdfff))) return 0;
  if (length == 4 && (code_point < 0x10000 || code_point > 0x10ffff)) return 0;
  return length;
}

std::string Printable(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    size_t length = Utf8SequenceLength(text, i);
    bool control = byte < 0x20 || byte == 0x7f ||
                   // U+0080..U+009F (C1 controls, e.g. CSI) are escapes too on many terminals.
                   (length == 2 && byte == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0);
    if (length == 0 || control) {
      result.push_back('?');
      i += std::max<size_t>(length, 1);
    } else {
      result.append(text.substr(i, length));
      i += length;
    }
  }
  return result;
}

const char* ClockSourceName(shm::ClockSource source) {
  switch (source) {
    case shm::ClockSource::kTsc: return "tsc";
    case shm::ClockSource::kMonotonicRaw: return "monotonic_raw";
  }
  return "unknown";
}

const char* SymbolStateName(shm::SymbolState state) {
  switch (state) {
    case shm::SymbolState::kEmpty: return "empty";
    case shm::SymbolState::kRegistered: return "registered";
    case shm::SymbolState::kResolved: return "resolved";
    case shm::SymbolState::kUnresolvable: return "unresolvable";
  }
  return "unknown";
}

}  // namespace limpwatch::cli
