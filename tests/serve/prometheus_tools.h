// Finding Prometheus's own programs for the tests that use them, and the
// message a test skips with when they are missing.
#ifndef LIMPWATCH_TESTS_SERVE_PROMETHEUS_TOOLS_H_
#define LIMPWATCH_TESTS_SERVE_PROMETHEUS_TOOLS_H_

#include <string>

namespace limpwatch::testing {

// The full path of `program` found on PATH (then /usr/bin), or "".
std::string FindOnPath(const std::string& program);

// "promtool is not installed: ...": says what to install, for GTEST_SKIP.
std::string MissingPrometheusTool(const std::string& program);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SERVE_PROMETHEUS_TOOLS_H_
