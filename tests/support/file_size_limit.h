// A file-size limit (RLIMIT_FSIZE) on the test process, standing for a disk
// that fills up: the write that crosses it lands in part, the next ones are
// refused (EFBIG; the SIGXFSZ that comes with them is ignored), as on a
// full disk. Lifted, with SIGXFSZ's handling, however the test ends. The
// limit holds for every file the process writes: set it after creating
// what must be written in full (a segment is sized with ftruncate).
#ifndef LIMPWATCH_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
#define LIMPWATCH_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>

namespace limpwatch::testing {

class FileSizeLimit {
 public:
  FileSizeLimit() {
    getrlimit(RLIMIT_FSIZE, &saved_);
    struct sigaction ignore{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, &saved_action_);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    sigaction(SIGXFSZ, &saved_action_, nullptr);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

  bool Set(uint64_t bytes) {
    rlimit limit{bytes, saved_.rlim_max};
    return setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }

 private:
  rlimit saved_{};
  struct sigaction saved_action_{};
};

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_FILE_SIZE_LIMIT_H_
