// trove / dbpf bstreams: one file per datafile object holding its bytes.
//
// Like PVFS's "directio" trove method, aligned requests go through an
// O_DIRECT descriptor (bypassing the page cache, so the time a read or write
// takes is the disk's, and per-process blkio throttling applies to it), and
// requests that are not 4 KiB aligned (the tail of a small file) go through a
// second, buffered descriptor of the same file. The kernel keeps the two
// coherent (a direct read first writes back dirty cached pages of its range).
// Where the file system refuses O_DIRECT (EINVAL at open), every request is
// buffered and direct_io() says so.
//
// Descriptors are kept in an open-file cache (dbpf_open_cache): at most
// kMaxOpenBstreams objects open, least recently used closed first. An open
// that fails (EMFILE under a low RLIMIT_NOFILE, ENOSPC, ...) is returned as
// that errno and travels to the client.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_BSTREAM_STORE_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_BSTREAM_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace limpwatch::testbed::trove {

inline constexpr size_t kMaxOpenBstreams = 128;

class BstreamStore {
 public:
  BstreamStore() = default;
  BstreamStore(const BstreamStore&) = delete;
  BstreamStore& operator=(const BstreamStore&) = delete;

  // Prepares <storage_space>/bstreams and finds out whether O_DIRECT works
  // there. False with *error if the directory cannot be made.
  bool Open(const std::string& storage_space, bool want_direct_io, std::string* error);
  bool direct_io() const { return direct_io_; }

  // All return 0 or an errno and may be called from any thread. A missing
  // bstream reads as empty (PVFS creates bstreams on first write).
  int Write(uint64_t handle, const uint8_t* data, size_t length, uint64_t offset, size_t* written);
  int Read(uint64_t handle, uint8_t* data, size_t length, uint64_t offset, size_t* bytes_read);
  int Sync(uint64_t handle);
  int GetSize(uint64_t handle, uint64_t* size);
  int Truncate(uint64_t handle, uint64_t size);
  int Remove(uint64_t handle);

 private:
  struct OpenFiles {
    int direct_fd = -1;  // O_DIRECT, or -1 when direct I/O is off
    int buffered_fd = -1;
    uint64_t last_use = 0;
    ~OpenFiles();
  };

  std::string BstreamPath(uint64_t handle) const;
  // The cached descriptors of `handle`, opening them (creating the file if
  // `create`) on a miss. ENOENT when absent and !create.
  int AcquireOpenFiles(uint64_t handle, bool create, std::shared_ptr<OpenFiles>* files);
  void EvictLeastRecentlyUsed();  // mutex_ held
  void ForgetOpenFiles(uint64_t handle);

  static bool IsDirectIoAligned(const void* data, size_t length, uint64_t offset);
  // Direct and buffered transfers are separate functions on purpose: a
  // profile then tells time spent on the disk from time in the page cache.
  int WriteDirect(int fd, const uint8_t* data, size_t length, uint64_t offset, size_t* written);
  int WriteBuffered(int fd, const uint8_t* data, size_t length, uint64_t offset, size_t* written);
  int ReadDirect(int fd, uint8_t* data, size_t length, uint64_t offset, size_t* bytes_read);
  int ReadBuffered(int fd, uint8_t* data, size_t length, uint64_t offset, size_t* bytes_read);

  std::string directory_;
  bool direct_io_ = false;
  std::mutex mutex_;
  std::unordered_map<uint64_t, std::shared_ptr<OpenFiles>> open_cache_;
  uint64_t use_clock_ = 0;
};

}  // namespace limpwatch::testbed::trove

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_BSTREAM_STORE_H_
