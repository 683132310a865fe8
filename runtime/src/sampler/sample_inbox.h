// One traced process's share of the node's sampling events: a queue in a
// shared-memory file that the process holding the node's per-CPU events
// (node_sample_sharing.h) fills with this process's samples, and this
// process empties.
//
// One writer (the holder of the node's events), one reader (the process the
// queue is named after); neither ever waits for the other: the holder drops
// and counts a sample that finds the queue full, as the kernel does with a
// full perf ring.
//
// The reader holds a shared flock on its file for as long as it lives, so
// the holder learns that a reader has gone (exited, crashed, killed) from a
// non-blocking exclusive flock that succeeds, without a pid that could have
// been reused. The file is created under a temporary name and renamed once
// locked and initialised, so the holder never sees an unlocked new file.
// The holder keeps only the mapping of an inbox, no descriptor: it opens
// the file for a moment when it checks on its reader, so its descriptors do
// not grow with the node's traced processes.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_INBOX_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_INBOX_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace limpwatch::runtime {

// One sample as the holder files it; the reader filters and attributes it.
struct SharedSample {
  uint64_t ip = 0;
  uint64_t user_ip = 0;  // innermost user frame under a kernel sample, 0 if unknown
  uint32_t tid = 0;
  uint32_t in_kernel = 0;
};

inline constexpr uint64_t kInboxMagic = 0x786f626e49706d53ull;  // "SmpInbox"
inline constexpr uint32_t kInboxVersion = 1;
inline constexpr uint32_t kMinInboxCapacity = 256;
inline constexpr uint32_t kMaxInboxCapacity = 1u << 20;

struct InboxHeader {
  uint64_t magic;  // written last, with release, once the rest is set
  uint32_t version;
  uint32_t capacity;  // samples; a power of two
  uint32_t pid;
  uint32_t rate_hz;
  alignas(64) std::atomic<uint64_t> written;  // holder
  std::atomic<uint64_t> dropped;              // holder: samples that found the queue full
  std::atomic<uint64_t> lost;                 // holder: samples the kernel dropped in the shared rings
  alignas(64) std::atomic<uint64_t> read;     // reader
};

// The file of `pid`'s inbox among the inboxes of the events shared in
// `scope` (SharingScope(), node_sample_sharing.h) at `rate_hz`:
// "limpwatch-samples.SCOPE.RATE.PID".
std::string InboxFileName(const std::string& scope, uint32_t rate_hz, pid_t pid);
// The pid of an inbox file name of that scope and rate; nullopt for any other
// name (another rate, a temporary name, anything else in the directory).
std::optional<pid_t> InboxPid(std::string_view file_name, const std::string& scope, uint32_t rate_hz);

// Room for two seconds of samples from every CPU at `rate_hz`, the same
// margin as the kernel's rings, within the bounds above.
uint32_t InboxCapacityFor(uint32_t rate_hz, size_t cpu_count);

// An inbox file as one side maps it: closed and unmapped when destroyed.
struct InboxMapping {
  InboxMapping() = default;
  ~InboxMapping() { Close(); }
  InboxMapping(const InboxMapping&) = delete;
  InboxMapping& operator=(const InboxMapping&) = delete;
  // Maps `size` bytes of `fd`; false with errno set.
  bool Map(size_t size);
  void Close();  // unmaps and closes; the file stays

  std::string path;
  int fd = -1;
  void* base = nullptr;
  size_t size = 0;
  InboxHeader* header = nullptr;
  SharedSample* slots = nullptr;
};

// The reader's side.
class SampleInbox {
 public:
  // Creates, locks and publishes `directory`/InboxFileName(...). A file left
  // under that name by an earlier process of the same pid is replaced.
  // Returns null with a one-line *error.
  static std::unique_ptr<SampleInbox> Create(const std::string& directory, const std::string& scope, uint32_t rate_hz,
                                             pid_t pid, uint32_t capacity, std::string* error);
  ~SampleInbox();  // removes the file, unmaps, closes
  SampleInbox(const SampleInbox&) = delete;
  SampleInbox& operator=(const SampleInbox&) = delete;

  // Passes every sample filed since the last call to `visit`, oldest first;
  // returns their number and adds to *lost the samples dropped or lost for
  // this process meanwhile.
  size_t Drain(const std::function<void(const SharedSample&)>& visit, uint64_t* lost);

  // In a forked child: the parent's inbox stays the parent's. Closes the
  // inherited descriptor (the parent's lock lives on in the parent) and
  // unmaps the child's copy, removing nothing.
  void ReleaseAfterFork();

 private:
  SampleInbox() = default;
  InboxMapping file_;
  bool published_ = false;  // file_.path is ours to remove
  uint64_t losses_seen_ = 0;  // dropped + lost, as of the last Drain
};

// The holder's side: one attached inbox.
class SampleOutbox {
 public:
  // Opens and checks `path` (an inbox of `pid` at `rate_hz`). Returns null
  // with a one-line *error naming the file and what is wrong with it.
  static std::unique_ptr<SampleOutbox> Attach(const std::string& path, pid_t pid, uint32_t rate_hz,
                                              std::string* error);
  SampleOutbox(const SampleOutbox&) = delete;
  SampleOutbox& operator=(const SampleOutbox&) = delete;

  // Files one sample; false (and counted as dropped) when the queue is full.
  bool Push(const SharedSample& sample);
  void AddLost(uint64_t samples);

  // Whether the reader has gone: its file removed or replaced, or nobody
  // holds its lock any more.
  bool ReaderGone();
  // Removes the file, if it is still this inbox's (a new process of the
  // same pid may have published one of its own under the name).
  void RemoveFile();

  // In a forked child: unmaps the child's copy.
  void ReleaseAfterFork();

 private:
  SampleOutbox() = default;
  InboxMapping file_;  // fd closed once mapped
  uint32_t capacity_ = 0;
  dev_t device_ = 0;  // the file mapped, told apart from a new one
  ino_t inode_ = 0;   // published later under the same name
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_INBOX_H_
