#include "sampler/node_sample_sharing.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace limpwatch::runtime {
namespace {

constexpr size_t kControlBytes = 4096;
constexpr long kNsPerSecond = 1'000'000'000;

std::string ErrnoText(int error_number) { return std::strerror(error_number); }

// The control file is mapped by several processes: the futexes are shared
// ones (no FUTEX_PRIVATE_FLAG).
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected, long timeout_ns) {
  timespec timeout{timeout_ns / kNsPerSecond, timeout_ns % kNsPerSecond};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

int64_t NowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * kNsPerSecond + now.tv_nsec;
}

pid_t LeaseHolder(uint64_t lease) { return static_cast<pid_t>(lease & 0xffffffff); }

// Dead, or a zombie: a holder that died without freeing its lease (killed,
// or ended by _exit as a sanitizer's leak check does) stays a zombie until
// its parent reaps it, and a daemon's parent may wait for the very child
// that is waiting for the lease.
bool HolderGone(pid_t pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[512];
  ssize_t length = read(fd, text, sizeof text - 1);
  close(fd);
  if (length <= 0) return false;
  text[length] = '\0';
  const char* name_end = std::strrchr(text, ')');  // the command may hold spaces and parentheses
  return name_end != nullptr && name_end[1] == ' ' && (name_end[2] == 'Z' || name_end[2] == 'X');
}

// `a` at or after `b` on a counter that wraps.
bool NotBefore(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) >= 0; }

// Opens the control file with a shared flock, held for as long as this
// process takes part: the last to leave removes the file (RemoveIfLast),
// so nothing stays in the directory once no traced process runs. A file
// removed between our open and our lock is not the node's any more: open
// again. Returns the descriptor, or -1 with *error.
int OpenControlFile(const std::string& path, std::string* error) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      *error = "opening " + path + ": " + ErrnoText(errno);
      return -1;
    }
    // Blocks only while a last leaver holds it exclusively to remove it.
    if (flock(fd, LOCK_SH) != 0) {
      *error = "locking " + path + ": " + ErrnoText(errno);
      close(fd);
      return -1;
    }
    struct stat opened {}, named {};
    if (fstat(fd, &opened) == 0 && opened.st_nlink > 0 && stat(path.c_str(), &named) == 0 &&
        named.st_dev == opened.st_dev && named.st_ino == opened.st_ino) {
      return fd;
    }
    close(fd);
  }
  *error = path + " keeps being removed and created again";
  return -1;
}

}  // namespace

std::string SharingScope() {
  std::string scope = std::to_string(geteuid()) + ".";
  struct stat namespace_status {};
  if (stat("/proc/self/ns/pid", &namespace_status) == 0) return scope + std::to_string(namespace_status.st_ino);
  return scope + "0";
}

std::string SharingControlFileName(const std::string& scope, uint32_t rate_hz) {
  return "limpwatch-sampler." + scope + "." + std::to_string(rate_hz);
}

std::unique_ptr<NodeSampleSharing> NodeSampleSharing::Join(const std::string& directory, const std::string& scope,
                                                           uint32_t rate_hz, pid_t pid, uint32_t inbox_capacity,
                                                           std::string* error) {
  auto sharing = std::unique_ptr<NodeSampleSharing>(new NodeSampleSharing());
  sharing->directory_ = directory;
  sharing->scope_ = scope;
  sharing->rate_hz_ = rate_hz;
  sharing->pid_ = pid;
  std::string path = directory + "/" + SharingControlFileName(scope, rate_hz);
  sharing->control_path_ = path;
  int fd = OpenControlFile(path, error);
  if (fd < 0) return nullptr;
  sharing->control_fd_ = fd;
  struct stat status {};
  if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_uid != geteuid()) {
    *error = path + " is not a regular file of this user";
    return nullptr;
  }
  // Growing a file to the size it already has changes nothing, so every
  // process may do it, first or not.
  if (size_t(status.st_size) < kControlBytes && ftruncate(fd, off_t(kControlBytes)) != 0) {
    *error = "sizing " + path + ": " + ErrnoText(errno);
    return nullptr;
  }
  void* base = mmap(nullptr, kControlBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = "mapping " + path + ": " + ErrnoText(errno);
    return nullptr;
  }
  auto* control = static_cast<SharingControl*>(base);
  sharing->control_ = control;
  // A new file is all zeros; whoever comes first stamps it, and a file
  // stamped otherwise is not ours to use.
  uint32_t no_version = 0;
  control->version.compare_exchange_strong(no_version, kSharingVersion);
  uint64_t no_magic = 0;
  control->magic.compare_exchange_strong(no_magic, kSharingMagic);
  if (control->magic.load() != kSharingMagic || control->version.load() != kSharingVersion) {
    *error = path + " is not a sampling control file of this version";
    return nullptr;
  }
  sharing->inbox_ = SampleInbox::Create(directory, scope, rate_hz, pid, inbox_capacity, error);
  if (!sharing->inbox_) return nullptr;
  control->joins.fetch_add(1, std::memory_order_acq_rel);
  sharing->left_ = false;
  return sharing;
}

NodeSampleSharing::~NodeSampleSharing() {
  Leave();
  if (control_ != nullptr) munmap(control_, kControlBytes);
  if (control_fd_ >= 0) close(control_fd_);
}

void NodeSampleSharing::RemoveIfLast() {
  if (control_fd_ < 0 || left_) return;
  left_ = true;
  // Nobody else holds the shared lock: no one takes part any more, and a
  // process that opens the file meanwhile waits for this lock, then finds
  // the file removed and creates a new one. (If the exclusive lock is
  // refused, the conversion may have dropped our shared one: we are
  // leaving anyway.)
  if (flock(control_fd_, LOCK_EX | LOCK_NB) == 0) {
    unlink(control_path_.c_str());
    flock(control_fd_, LOCK_UN);
  }
}

bool NodeSampleSharing::TryTakeOver() {
  if (holder_) return true;
  uint64_t lease = control_->lease.load(std::memory_order_acquire);
  pid_t holder = LeaseHolder(lease);
  // The holder's own pid: a lease left by this process's image before an
  // exec, whose events closed with it.
  bool free = holder == 0 || holder == pid_ || HolderGone(holder) ||
              NowNs() - control_->heartbeat_ns.load(std::memory_order_acquire) > kStaleLeaseNs;
  if (!free) return false;
  uint64_t taken = ((lease >> 32) + 1) << 32 | static_cast<uint32_t>(pid_);
  if (!control_->lease.compare_exchange_strong(lease, taken, std::memory_order_acq_rel)) return false;
  control_->heartbeat_ns.store(NowNs(), std::memory_order_release);
  lease_ = taken;
  holder_ = true;
  rounds_ = 0;
  // Requests the last holder left unserved make the first Wait() return at once.
  round_requests_ = control_->flushes_served.load(std::memory_order_acquire);
  return true;
}

bool NodeSampleSharing::StillHolder() {
  if (!holder_) return false;
  if (control_->lease.load(std::memory_order_acquire) == lease_) return true;
  outboxes_.clear();
  holder_ = false;
  return false;
}

void NodeSampleSharing::Release() {
  if (!holder_) return;
  outboxes_.clear();
  holder_ = false;
  uint64_t mine = lease_;
  // Only a lease still ours is freed: one taken over meanwhile is another's.
  if (control_->lease.compare_exchange_strong(mine, lease_ & ~uint64_t{0xffffffff}, std::memory_order_acq_rel)) {
    control_->holder_changes.fetch_add(1, std::memory_order_acq_rel);
    FutexWakeAll(&control_->holder_changes);
  }
}

void NodeSampleSharing::Leave() {
  Release();
  inbox_.reset();
  RemoveIfLast();
}

bool NodeSampleSharing::Deliver(uint32_t pid, const SharedSample& sample) {
  auto member = outboxes_.find(pid);
  return member != outboxes_.end() && member->second->Push(sample);
}

void NodeSampleSharing::DeliverLost(uint64_t samples) {
  for (auto& [pid, outbox] : outboxes_) outbox->AddLost(samples);
}

std::vector<std::string> NodeSampleSharing::BeginRound(uint32_t rescan_every) {
  round_requests_ = control_->flush_requests.load(std::memory_order_acquire);
  uint32_t joins = control_->joins.load(std::memory_order_acquire);
  bool periodic = rounds_++ % (rescan_every == 0 ? 1 : rescan_every) == 0;
  if (!periodic && joins == joins_seen_) return {};
  joins_seen_ = joins;
  return Rescan();
}

void NodeSampleSharing::EndRound() {
  control_->heartbeat_ns.store(NowNs(), std::memory_order_release);
  uint32_t served = control_->flushes_served.load(std::memory_order_relaxed);
  while (!NotBefore(served, round_requests_) &&
         !control_->flushes_served.compare_exchange_weak(served, round_requests_, std::memory_order_acq_rel)) {
  }
  FutexWakeAll(&control_->flushes_served);
}

std::vector<std::string> NodeSampleSharing::Rescan() {
  std::vector<std::string> problems;
  for (auto member = outboxes_.begin(); member != outboxes_.end();) {
    if (member->second->ReaderGone()) {
      member->second->RemoveFile();
      member = outboxes_.erase(member);
    } else {
      ++member;
    }
  }
  DIR* listing = opendir(directory_.c_str());
  if (listing == nullptr) return problems;
  std::unordered_set<std::string> still_refused;
  while (dirent* entry = readdir(listing)) {
    std::optional<pid_t> pid = InboxPid(entry->d_name, scope_, rate_hz_);
    if (!pid || *pid == pid_ || outboxes_.count(static_cast<uint32_t>(*pid)) != 0) continue;
    std::string error;
    auto outbox = SampleOutbox::Attach(directory_ + "/" + entry->d_name, *pid, rate_hz_, &error);
    if (!outbox) {
      if (refused_.count(entry->d_name) == 0) problems.push_back(error);
      still_refused.insert(entry->d_name);
      continue;
    }
    if (outbox->ReaderGone()) {
      outbox->RemoveFile();  // left by a process that died
      continue;
    }
    outboxes_.emplace(static_cast<uint32_t>(*pid), std::move(outbox));
  }
  closedir(listing);
  refused_ = std::move(still_refused);
  return problems;
}

size_t NodeSampleSharing::DrainInbox(const std::function<void(const SharedSample&)>& visit, uint64_t* lost) {
  return inbox_ ? inbox_->Drain(visit, lost) : 0;
}

NodeSampleSharing::WaitTicket NodeSampleSharing::PrepareWait() const {
  if (!holder_) return {&control_->holder_changes, control_->holder_changes.load(std::memory_order_acquire)};
  // A request that came during the last read: no waiting.
  if (control_->flush_requests.load(std::memory_order_acquire) != round_requests_) return {};
  return {&control_->flush_requests, round_requests_};
}

void NodeSampleSharing::WaitFor(const WaitTicket& ticket, long timeout_ns) {
  if (ticket.word != nullptr) FutexWait(ticket.word, ticket.expected, timeout_ns);
}

bool NodeSampleSharing::RequestFlush(long timeout_ns) {
  if (holder_ || LeaseHolder(control_->lease.load(std::memory_order_acquire)) == 0) return false;
  uint32_t request = control_->flush_requests.fetch_add(1, std::memory_order_acq_rel) + 1;
  FutexWakeAll(&control_->flush_requests);
  const int64_t deadline = NowNs() + timeout_ns;
  for (;;) {
    uint32_t served = control_->flushes_served.load(std::memory_order_acquire);
    if (NotBefore(served, request)) return true;
    long left = static_cast<long>(deadline - NowNs());
    if (left <= 0) return false;
    FutexWait(&control_->flushes_served, served, left);
  }
}

void NodeSampleSharing::ReleaseAfterFork() {
  holder_ = false;  // the lease is the parent's
  for (auto& [pid, outbox] : outboxes_) outbox->ReleaseAfterFork();
  outboxes_.clear();
  if (inbox_) inbox_->ReleaseAfterFork();
  inbox_.reset();
  if (control_ != nullptr) munmap(control_, kControlBytes);
  control_ = nullptr;
  if (control_fd_ >= 0) close(control_fd_);  // the parent's lock stays: it is the parent's descriptor too
  control_fd_ = -1;
}

}  // namespace limpwatch::runtime
