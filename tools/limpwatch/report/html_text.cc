#include "html_text.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "format.h"

namespace limpwatch::report {
namespace {

std::string FormatUtc(uint64_t unix_ms, const char* format) {
  time_t seconds = static_cast<time_t>(unix_ms / 1000);
  tm utc{};
  if (gmtime_r(&seconds, &utc) == nullptr) return "-";
  char text[64];
  size_t length = strftime(text, sizeof text, format, &utc);
  return std::string(text, length);
}

}  // namespace

std::string EscapeHtml(std::string_view text) {
  // Line breaks and tabs are text (the evaluation's table); every other
  // control character is not.
  std::string printable;
  for (size_t start = 0; start <= text.size();) {
    size_t end = std::min(text.find_first_of("\n\t", start), text.size());
    printable += cli::Printable(text.substr(start, end - start));
    if (end < text.size()) printable += text[end];
    start = end + 1;
  }
  std::string out;
  out.reserve(printable.size() + 16);
  for (char c : printable) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ShortNumber(double value) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  char text[32];
  double magnitude = std::fabs(value);
  if (magnitude >= 1e6 || magnitude < 1e-3) {
    std::snprintf(text, sizeof text, "%.2g", value);
  } else if (magnitude >= 1000) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.3g", value);
  }
  return text;
}

std::string UtcDateTime(uint64_t unix_ms) { return FormatUtc(unix_ms, "%Y-%m-%d %H:%M:%S"); }

std::string UtcTimeOfDay(uint64_t unix_ms) { return FormatUtc(unix_ms, "%H:%M:%S"); }

}  // namespace limpwatch::report
