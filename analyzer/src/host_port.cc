#include "host_port.h"

#include <charconv>

namespace limpwatch::analyzer {

std::optional<uint16_t> ParsePortNumber(std::string_view text) {
  unsigned value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > 65535) return std::nullopt;
  return static_cast<uint16_t>(value);
}

std::string_view TrimWhitespace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  size_t last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

std::optional<HostPort> SplitHostPort(std::string_view text, std::string* error) {
  std::string_view host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      *error = "unclosed '[' in '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      *error = "no ':port' after ']' in '" + std::string(text) + "'";
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      *error = "no ':port' in '" + std::string(text) + "'";
      return std::nullopt;
    }
    if (text.find(':') != colon) {
      *error = "IPv6 address without brackets in '" + std::string(text) + "' (write [addr]:port)";
      return std::nullopt;
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) {
    *error = "empty host in '" + std::string(text) + "'";
    return std::nullopt;
  }
  auto port = ParsePortNumber(port_text);
  if (!port) {
    *error = "bad port '" + std::string(port_text) + "' in '" + std::string(text) + "'";
    return std::nullopt;
  }
  return HostPort{std::string(host), *port};
}

}  // namespace limpwatch::analyzer
