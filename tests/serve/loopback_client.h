// A plain HTTP client on loopback, for the tests of `limpwatch serve` and its
// scrape-load benchmark.
#ifndef LIMPWATCH_TESTS_SERVE_LOOPBACK_CLIENT_H_
#define LIMPWATCH_TESTS_SERVE_LOOPBACK_CLIENT_H_

#include <cstdint>
#include <string>

namespace limpwatch::testing {

// A TCP connection to 127.0.0.1:port whose reads give up after
// `receive_timeout_s`; -1 when the connection is refused.
int ConnectLoopback(uint16_t port, int receive_timeout_s);

// GET `target` with "Connection: close"; the whole reply, headers included
// ("" when the port does not answer).
std::string HttpGetReply(uint16_t port, const std::string& target, int receive_timeout_s);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SERVE_LOOPBACK_CLIENT_H_
