#include "sampler/sample_inbox.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace limpwatch::runtime {
namespace {

constexpr std::string_view kInboxPrefix = "limpwatch-samples.";

std::string ErrnoText(int error_number) { return std::strerror(error_number); }

size_t InboxBytes(uint32_t capacity) { return sizeof(InboxHeader) + size_t{capacity} * sizeof(SharedSample); }

bool IsPowerOfTwo(uint32_t value) { return value != 0 && (value & (value - 1)) == 0; }

std::string NamePrefix(const std::string& scope, uint32_t rate_hz) {
  return std::string(kInboxPrefix) + scope + "." + std::to_string(rate_hz) + ".";
}

}  // namespace

std::string InboxFileName(const std::string& scope, uint32_t rate_hz, pid_t pid) {
  return NamePrefix(scope, rate_hz) + std::to_string(pid);
}

std::optional<pid_t> InboxPid(std::string_view file_name, const std::string& scope, uint32_t rate_hz) {
  std::string prefix = NamePrefix(scope, rate_hz);
  if (file_name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = file_name.substr(prefix.size());
  if (digits.empty() || digits.size() > 9) return std::nullopt;
  pid_t pid = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (error != std::errc() || end != digits.data() + digits.size() || pid <= 0) return std::nullopt;
  return pid;
}

uint32_t InboxCapacityFor(uint32_t rate_hz, size_t cpu_count) {
  uint64_t wanted = 2ull * rate_hz * (cpu_count == 0 ? 1 : cpu_count);
  uint32_t capacity = kMinInboxCapacity;
  while (capacity < wanted && capacity < kMaxInboxCapacity) capacity *= 2;
  return capacity;
}

bool InboxMapping::Map(size_t bytes) {
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) return false;
  base = mapped;
  size = bytes;
  header = static_cast<InboxHeader*>(mapped);
  slots = reinterpret_cast<SharedSample*>(header + 1);
  return true;
}

void InboxMapping::Close() {
  if (base != nullptr) munmap(base, size);
  base = nullptr;
  header = nullptr;
  slots = nullptr;
  if (fd >= 0) close(fd);
  fd = -1;
}

std::unique_ptr<SampleInbox> SampleInbox::Create(const std::string& directory, const std::string& scope,
                                                 uint32_t rate_hz, pid_t pid, uint32_t capacity,
                                                 std::string* error) {
  if (!IsPowerOfTwo(capacity) || capacity < kMinInboxCapacity || capacity > kMaxInboxCapacity) {
    *error = "sample inbox capacity " + std::to_string(capacity) + " is not a power of two within bounds";
    return nullptr;
  }
  std::string path = directory + "/" + InboxFileName(scope, rate_hz, pid);
  std::string staging = path + ".new";
  unlink(staging.c_str());  // a leftover of an earlier process of this pid
  auto inbox = std::unique_ptr<SampleInbox>(new SampleInbox());
  InboxMapping& file = inbox->file_;
  file.fd = open(staging.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (file.fd < 0) {
    *error = "creating " + staging + ": " + ErrnoText(errno);
    return nullptr;
  }
  file.path = staging;  // until renamed, the destructor removes the staging file
  inbox->published_ = true;
  if (ftruncate(file.fd, off_t(InboxBytes(capacity))) != 0) {
    *error = "sizing " + staging + ": " + ErrnoText(errno);
    return nullptr;
  }
  if (flock(file.fd, LOCK_SH | LOCK_NB) != 0) {
    *error = "locking " + staging + ": " + ErrnoText(errno);
    return nullptr;
  }
  if (!file.Map(InboxBytes(capacity))) {
    *error = "mapping " + staging + ": " + ErrnoText(errno);
    return nullptr;
  }
  InboxHeader* header = new (file.base) InboxHeader{};
  header->version = kInboxVersion;
  header->capacity = capacity;
  header->pid = static_cast<uint32_t>(pid);
  header->rate_hz = rate_hz;
  std::atomic_ref<uint64_t>(header->magic).store(kInboxMagic, std::memory_order_release);
  if (rename(staging.c_str(), path.c_str()) != 0) {
    *error = "publishing " + path + ": " + ErrnoText(errno);
    return nullptr;
  }
  file.path = path;
  return inbox;
}

SampleInbox::~SampleInbox() {
  if (published_) unlink(file_.path.c_str());
}

size_t SampleInbox::Drain(const std::function<void(const SharedSample&)>& visit, uint64_t* lost) {
  InboxHeader* header = file_.header;
  if (header == nullptr) return 0;
  uint64_t read = header->read.load(std::memory_order_relaxed);
  uint64_t written = header->written.load(std::memory_order_acquire);
  const uint64_t capacity = header->capacity;
  size_t count = 0;
  if (written - read > capacity) {
    // Only a holder that broke the protocol gets here: what it overwrote is lost.
    *lost += written - read - capacity;
    read = written - capacity;
  }
  for (; read < written; ++read, ++count) visit(file_.slots[read & (capacity - 1)]);
  header->read.store(read, std::memory_order_release);
  uint64_t losses = header->dropped.load(std::memory_order_relaxed) + header->lost.load(std::memory_order_relaxed);
  if (losses > losses_seen_) *lost += losses - losses_seen_;
  losses_seen_ = losses;
  return count;
}

void SampleInbox::ReleaseAfterFork() {
  published_ = false;
  file_.Close();
}

std::unique_ptr<SampleOutbox> SampleOutbox::Attach(const std::string& path, pid_t pid, uint32_t rate_hz,
                                                   std::string* error) {
  auto outbox = std::unique_ptr<SampleOutbox>(new SampleOutbox());
  InboxMapping& file = outbox->file_;
  file.path = path;
  file.fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (file.fd < 0) {
    *error = "opening sample inbox " + path + ": " + ErrnoText(errno);
    return nullptr;
  }
  struct stat status {};
  if (fstat(file.fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_uid != geteuid()) {
    *error = "sample inbox " + path + " is not a regular file of this user";
    return nullptr;
  }
  if (size_t(status.st_size) < sizeof(InboxHeader)) {
    *error = "sample inbox " + path + " is shorter than its header";
    return nullptr;
  }
  if (!file.Map(size_t(status.st_size))) {
    *error = "mapping sample inbox " + path + ": " + ErrnoText(errno);
    return nullptr;
  }
  InboxHeader* header = file.header;
  if (std::atomic_ref<uint64_t>(header->magic).load(std::memory_order_acquire) != kInboxMagic ||
      header->version != kInboxVersion) {
    *error = "sample inbox " + path + " has no valid header (magic or version)";
    return nullptr;
  }
  uint32_t capacity = header->capacity;
  if (!IsPowerOfTwo(capacity) || capacity < kMinInboxCapacity || capacity > kMaxInboxCapacity ||
      InboxBytes(capacity) != file.size) {
    *error = "sample inbox " + path + " has a capacity of " + std::to_string(capacity) +
             " that does not match its size of " + std::to_string(file.size) + " bytes";
    return nullptr;
  }
  if (header->pid != static_cast<uint32_t>(pid) || header->rate_hz != rate_hz) {
    *error = "sample inbox " + path + " says pid " + std::to_string(header->pid) + " at " +
             std::to_string(header->rate_hz) + " Hz, not what its name says";
    return nullptr;
  }
  outbox->capacity_ = capacity;
  outbox->device_ = status.st_dev;
  outbox->inode_ = status.st_ino;
  close(file.fd);
  file.fd = -1;
  return outbox;
}

bool SampleOutbox::Push(const SharedSample& sample) {
  InboxHeader* header = file_.header;
  uint64_t written = header->written.load(std::memory_order_relaxed);
  uint64_t read = header->read.load(std::memory_order_acquire);
  if (written - read >= capacity_) {
    header->dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  file_.slots[written & (capacity_ - 1)] = sample;
  header->written.store(written + 1, std::memory_order_release);
  return true;
}

void SampleOutbox::AddLost(uint64_t samples) { file_.header->lost.fetch_add(samples, std::memory_order_relaxed); }

bool SampleOutbox::ReaderGone() {
  int fd = open(file_.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return true;  // removed by its reader at exit
  struct stat status {};
  bool gone = fstat(fd, &status) != 0 || status.st_dev != device_ || status.st_ino != inode_ ||
              flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);  // also drops the lock just taken, if any
  return gone;
}

void SampleOutbox::RemoveFile() {
  struct stat named {};
  if (stat(file_.path.c_str(), &named) != 0) return;
  if (named.st_dev == device_ && named.st_ino == inode_) unlink(file_.path.c_str());
}

void SampleOutbox::ReleaseAfterFork() { file_.Close(); }

}  // namespace limpwatch::runtime
