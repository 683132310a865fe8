// Runs the traced io_calls program and reads the I/O counters it leaves.
#ifndef LIMPWATCH_TESTS_SUPPORT_IO_RUN_H_
#define LIMPWATCH_TESTS_SUPPORT_IO_RUN_H_

#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"
#include "support/traced_run.h"

namespace limpwatch::testing {

// A directory of its own, removed with everything in it when the test ends.
class ScratchDirectory {
 public:
  // Under `parent` (which must exist); path() is empty if it could not be made.
  explicit ScratchDirectory(const std::string& parent = "/tmp");
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct IoRun {
  std::string name;  // the segment's LIMPWATCH_NAME
  ProgramRun run;
  shm::Snapshot snapshot;
};

// Runs `io_calls args...` to its end with a kept segment of a unique name and
// takes the snapshot. The caller removes the segment (SegmentCleanup(run.name)).
IoRun RunIoCalls(const std::vector<std::string>& args, std::vector<std::string> environment = {});

// The counters of one (kind, operation).
const shm::IoValues& Io(const shm::Snapshot& snapshot, shm::FdKind kind, shm::IoOperation operation);

// How often `error` was returned by (kind, operation).
uint64_t ErrnoCount(const shm::Snapshot& snapshot, shm::FdKind kind, shm::IoOperation operation, int error);

// Calls of every (kind, operation) pair except those listed, summed.
uint64_t CallsOutside(const shm::Snapshot& snapshot,
                      const std::vector<std::pair<shm::FdKind, shm::IoOperation>>& listed);

// The text after "<label> " on the line of `output` that starts with it.
std::string LineAfter(const std::string& output, const std::string& label);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_IO_RUN_H_
