// Where `limpwatch serve` listens: "ADDR:PORT".
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_LISTEN_ADDRESS_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_LISTEN_ADDRESS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace limpwatch::cli::serve {

// Loopback only unless told otherwise: whoever reaches the port reads every
// served segment's metrics.
inline constexpr uint16_t kDefaultPort = 9434;
inline constexpr std::string_view kDefaultListen = "127.0.0.1:9434";

struct ListenAddress {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0", "localhost"
  uint16_t port = kDefaultPort;  // 0: any free port (the one bound is printed)
};

// "127.0.0.1:9434", "[::1]:9434", "localhost:0". False with a one-line
// *error for anything else.
bool ParseListenAddress(std::string_view text, ListenAddress* out, std::string* error);

// A non-blocking, close-on-exec TCP socket bound to `address` and listening;
// -1 with a one-line *error.
int OpenListeningSocket(const ListenAddress& address, std::string* error);

// The address a socket is bound to: "127.0.0.1:43117", "[::1]:9434".
std::string BoundAddress(int fd);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_LISTEN_ADDRESS_H_
