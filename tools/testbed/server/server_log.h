// One-line log messages of a test-bed server on stderr (the launcher sends
// them to <dir>/<alias>.log), each prefixed with the time and the alias.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_SERVER_LOG_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_SERVER_LOG_H_

#include <string>

namespace limpwatch::testbed {

// Sets the alias printed in front of every line; call once at start.
void SetLogName(const std::string& name);

// Writes one line; safe from any thread.
void LogLine(const std::string& message);

// Like LogLine, but at most once per second per `key` (a flood of the same
// error, such as EMFILE on accept, stays readable).
void LogLineRateLimited(int key, const std::string& message);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_SERVER_LOG_H_
