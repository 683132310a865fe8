// Splitting "host:port" text as the peer configuration writes it. Internal.
#ifndef LIMPWATCH_ANALYZER_SRC_HOST_PORT_H_
#define LIMPWATCH_ANALYZER_SRC_HOST_PORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace limpwatch::analyzer {

struct HostPort {
  std::string host;  // brackets of an IPv6 literal removed
  uint16_t port = 0;
};

// "name:4334", "10.0.0.1:4334" or "[::1]:4334". nullopt and a short reason
// in *error otherwise (a bare IPv6 literal is refused: its colons are
// ambiguous with the port's).
std::optional<HostPort> SplitHostPort(std::string_view text, std::string* error);

// A decimal number in [0, 65535] with nothing around it.
std::optional<uint16_t> ParsePortNumber(std::string_view text);

std::string_view TrimWhitespace(std::string_view text);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_HOST_PORT_H_
