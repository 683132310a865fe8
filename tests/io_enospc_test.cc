// ENOSPC from a file system that fills up: a 256 KiB tmpfs mounted for the
// test (as root), always unmounted and removed again.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "support/io_run.h"

namespace limpwatch::testing {
namespace {

// A tmpfs of `size` mounted on a fresh directory; unmounted and removed when
// the test ends, passed or failed.
class SmallTmpfs {
 public:
  explicit SmallTmpfs(const char* size) {
    std::string pattern = "/tmp/limpwatch-enospc-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      problem_ = std::string("mkdtemp: ") + std::strerror(errno);
      return;
    }
    directory_ = pattern;
    if (mount("tmpfs", directory_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, (std::string("size=") + size).c_str()) != 0) {
      problem_ = "mount -t tmpfs refused: " + std::string(std::strerror(errno)) + " (needs root)";
      return;
    }
    mounted_ = true;
  }
  ~SmallTmpfs() {
    if (mounted_) umount2(directory_.c_str(), MNT_DETACH);
    if (!directory_.empty()) rmdir(directory_.c_str());
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& problem() const { return problem_; }
  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
  std::string problem_;
  bool mounted_ = false;
};

TEST(IoErrnoTest, EnospcFromAFullFileSystemIsCountedWithTheBytesWritten) {
  SmallTmpfs tmpfs("256k");
  if (!tmpfs.mounted()) GTEST_SKIP() << tmpfs.problem();
  IoRun io = RunIoCalls({"enospc", tmpfs.directory()});
  SegmentCleanup cleanup(io.name);
  const shm::Snapshot& s = io.snapshot;
  long long written = 0;
  int writes = 0;
  ASSERT_EQ(std::sscanf(LineAfter(io.run.output, "written").c_str(), "%lld in %d", &written, &writes), 2)
      << io.run.output;
  EXPECT_GT(written, 0);
  EXPECT_LE(written, 256 * 1024);
  const shm::IoValues& file_writes = Io(s, shm::FdKind::kFile, shm::IoOperation::kWrite);
  EXPECT_EQ(file_writes.calls, uint64_t(writes) + 1);  // the successful writes and the one that failed
  EXPECT_EQ(file_writes.bytes, uint64_t(written));
  EXPECT_EQ(file_writes.errors, 1u);
  EXPECT_EQ(ErrnoCount(s, shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC), 1u);
}

}  // namespace
}  // namespace limpwatch::testing
