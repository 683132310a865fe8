// Helpers for the tests that change a process's selection while it runs
// (LIMPWATCH_SELECT manifests), shared by the selection and patching tests.
#ifndef LIMPWATCH_TESTS_SUPPORT_SELECTION_RUN_H_
#define LIMPWATCH_TESTS_SUPPORT_SELECTION_RUN_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace limpwatch::testing {

// A manifest file in the temporary directory, removed with the object.
class ManifestFile {
 public:
  explicit ManifestFile(const std::string& text);
  ~ManifestFile();
  ManifestFile(const ManifestFile&) = delete;
  ManifestFile& operator=(const ManifestFile&) = delete;
  // Replaces the file atomically, as an editor or a deployment would.
  void Write(const std::string& text);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The selection counters of a segment's header (not in shm::Snapshot).
struct SelectionCounters {
  uint64_t applied = 0;
  uint64_t errors = 0;
  uint64_t unselected = 0;
};

// Reads them from the live or kept segment `name` of `pid`; fails the test
// (and returns zeros) when it cannot be opened.
SelectionCounters ReadSelectionCounters(const std::string& name, pid_t pid);

// Polls until the segment says `applied` selections were applied, for at most
// `timeout_ms`. Returns whether it got there.
bool WaitForSelectionsApplied(const std::string& name, pid_t pid, uint64_t applied, int timeout_ms);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_SELECTION_RUN_H_
