// What the tests of long-running traced programs share: a file that
// LIMPWATCH_LOG appends the runtime's log lines to, and a guard that stops
// and reaps a started program when a test ends early.
#ifndef LIMPWATCH_TESTS_SUPPORT_STARTED_PROGRAM_H_
#define LIMPWATCH_TESTS_SUPPORT_STARTED_PROGRAM_H_

#include <sys/types.h>

#include <string>

namespace limpwatch::testing {

class LogFile {
 public:
  LogFile();
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;
  std::string Text() const;
  std::string Variable() const { return "LIMPWATCH_LOG=" + path_; }
  // Waits up to `timeout_ms` for `text` to appear in the log.
  bool WaitFor(const std::string& text, int timeout_ms) const;

 private:
  std::string path_;
};

class ChildGuard {
 public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard();
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  // Waits for the program and returns its wait status.
  int Wait();

 private:
  pid_t pid_;
};

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_STARTED_PROGRAM_H_
