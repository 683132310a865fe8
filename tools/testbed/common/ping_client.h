// PING a test-bed server over a fresh connection: the readiness check of the
// launcher and the round-trip measurement of the network-delay injector.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_PING_CLIENT_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_PING_CLIENT_H_

#include <cstdint>
#include <string>

namespace limpwatch::testbed {

struct PingResult {
  bool ok = false;
  int error = 0;        // errno of the failure (ECONNREFUSED, ETIMEDOUT, ...)
  std::string message;  // why it failed
  uint32_t server_index = 0;
  uint32_t server_count = 0;
  double median_rtt_us = 0;  // of `count` round trips after connecting
  double connect_us = 0;
};

// Connects to host:port and sends `count` PING requests one after another,
// each answered within timeout_ms.
PingResult PingServer(const std::string& host, uint16_t port, int count, int timeout_ms);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_PING_CLIENT_H_
