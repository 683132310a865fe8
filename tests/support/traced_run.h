// Runs a traced test program and reads the segment it leaves behind.
#ifndef LIMPWATCH_TESTS_SUPPORT_TRACED_RUN_H_
#define LIMPWATCH_TESTS_SUPPORT_TRACED_RUN_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::testing {

struct ProgramRun {
  pid_t pid = 0;
  int exit_status = -1;  // WEXITSTATUS, or -1 if it did not exit normally
  std::string output;    // its standard output
};

// A segment name unique to this test process and call.
std::string UniqueSegmentName(const std::string& prefix);

// Path of a test program built next to the tests.
std::string TestProgram(const std::string& name);

// Runs `program args...` with the given extra environment (NAME=VALUE),
// waits for it and captures its stdout.
ProgramRun RunProgram(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& environment);

// Starts a program without waiting; returns its pid and the read end of its stdout.
pid_t StartProgram(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& environment, int* stdout_fd);

// Reads a line from fd (blocking), without the newline.
std::string ReadLine(int fd);

// A wait status as "exit N" or "signal N (NAME)", for failure messages.
std::string DescribeWaitStatus(int status);

// Snapshot of the segment named `name` owned by `pid`; fails the test if missing.
shm::Snapshot ReadSegment(const std::string& name, pid_t pid);

// Function name -> its counters in a snapshot.
std::map<std::string, shm::CounterValues> CountersByName(const shm::Snapshot& snapshot);

// Removes every segment named `name` (any pid). Returns how many.
int RemoveSegmentsNamed(const std::string& name);

// Removes the named segments when the test ends, passed or failed.
class SegmentCleanup {
 public:
  explicit SegmentCleanup(std::string name) : name_(std::move(name)) {}
  ~SegmentCleanup() { RemoveSegmentsNamed(name_); }
  SegmentCleanup(const SegmentCleanup&) = delete;
  SegmentCleanup& operator=(const SegmentCleanup&) = delete;

 private:
  std::string name_;
};

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_TRACED_RUN_H_
