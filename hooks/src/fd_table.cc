#include "fd_table.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

namespace limpwatch::hooks {

constinit std::atomic<uint64_t> g_fd_entries[kFdTableSize] = {};
constinit uint32_t g_fd_table_size = kFdTableSize;

namespace {

// The highest fd number ever noted, so range closes need not sweep the table.
constinit std::atomic<uint32_t> g_fd_high_water{0};

uint32_t EncodeDevice(dev_t device) {
  uint32_t major_number = gnu_dev_major(device);
  uint32_t minor_number = gnu_dev_minor(device);
  return (minor_number & 0xff) | (major_number << 8) | ((minor_number & ~0xffu) << 12);
}

void RaiseHighWater(int fd) {
  uint32_t seen = g_fd_high_water.load(std::memory_order_relaxed);
  while (static_cast<uint32_t>(fd) > seen &&
         !g_fd_high_water.compare_exchange_weak(seen, static_cast<uint32_t>(fd), std::memory_order_relaxed)) {
  }
}

uint64_t NextGeneration(uint64_t entry) {
  return (entry + (uint64_t{1} << fd_bits::kGenerationShift)) & fd_bits::kGenerationMask;
}

// Replaces the non-generation bits of `fd`'s entry with `low_bits(old)`,
// bumping the generation; lock-free against concurrent changes.
template <typename LowBits>
void Replace(int fd, LowBits low_bits) {
  if (static_cast<uint32_t>(fd) >= g_fd_table_size) return;
  RaiseHighWater(fd);
  std::atomic<uint64_t>& slot = g_fd_entries[fd];
  uint64_t old = slot.load(std::memory_order_relaxed);
  while (!slot.compare_exchange_weak(old, NextGeneration(old) | low_bits(old), std::memory_order_acq_rel)) {
  }
}

int SocketOption(int fd, int option) {
  int value = -1;
  socklen_t length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0) return -1;
  return value;
}

}  // namespace

FdInfo DecodeFdEntry(uint64_t entry) {
  FdInfo info;
  uint64_t kind_code = entry & fd_bits::kKindMask;
  info.known = kind_code != 0 && kind_code <= shm::kFdKindCount;
  info.kind = info.known ? static_cast<shm::FdKind>(kind_code - 1) : shm::FdKind::kOther;
  info.checked = info.known && (entry & fd_bits::kChecked) != 0;
  uint32_t role_code = EntryRoleCode(entry);
  info.has_role = role_code != 0 && role_code <= shm::kSocketRoleCount;
  info.role = info.has_role ? static_cast<shm::SocketRole>(role_code - 1) : shm::SocketRole::kAccepted;
  info.device = static_cast<uint32_t>(entry >> fd_bits::kDeviceShift);
  return info;
}

uint64_t MakeFdEntry(const FdInfo& info) {
  uint64_t entry = 0;
  if (info.known) {
    entry |= static_cast<uint64_t>(info.kind) + 1;
    if (info.checked) entry |= fd_bits::kChecked;
  }
  if (info.has_role) entry |= (static_cast<uint64_t>(info.role) + 1) << fd_bits::kRoleShift;
  entry |= uint64_t{info.device} << fd_bits::kDeviceShift;
  return entry;
}

void NoteFdOpened(int fd, const FdInfo& info) {
  uint64_t low = MakeFdEntry(info);
  Replace(fd, [low](uint64_t) { return low; });
}

void NoteFdClosing(int fd) {
  Replace(fd, [](uint64_t) { return uint64_t{0}; });
}

void NoteFdRangeClosing(unsigned first, unsigned last) {
  unsigned top = std::min<unsigned>(last, g_fd_high_water.load(std::memory_order_relaxed));
  for (unsigned fd = first; fd <= top && fd < g_fd_table_size; ++fd) {
    if (g_fd_entries[fd].load(std::memory_order_relaxed) & ~fd_bits::kGenerationMask) NoteFdClosing(int(fd));
  }
}

void NoteFdDuplicated(int source, int target) {
  uint64_t low = LoadFdEntry(source) & ~fd_bits::kGenerationMask;
  Replace(target, [low](uint64_t) { return low; });
}

void NoteFdRole(int fd, shm::SocketRole role) {
  uint64_t role_bits = (static_cast<uint64_t>(role) + 1) << fd_bits::kRoleShift;
  Replace(fd, [role_bits](uint64_t old) {
    return (old & ~(fd_bits::kGenerationMask | fd_bits::kRoleMask)) | role_bits;
  });
}

shm::FdKind SocketKind(int domain, int type, int protocol) {
  int base_type = type & 0xf;  // without SOCK_NONBLOCK / SOCK_CLOEXEC
  if (domain == AF_UNIX) return shm::FdKind::kUnix;
  if (domain != AF_INET && domain != AF_INET6) return shm::FdKind::kOther;
  if (base_type == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) return shm::FdKind::kTcp;
  if (base_type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP)) return shm::FdKind::kUdp;
  return shm::FdKind::kOther;
}

shm::FdKind ClassifyFd(int fd, uint64_t entry_seen, uint64_t* classified_entry) {
  *classified_entry = 0;
  struct stat status;
  if (fd < 0 || fstat(fd, &status) != 0) return shm::FdKind::kOther;
  FdInfo info = DecodeFdEntry(entry_seen);
  info.known = true;
  info.checked = true;
  info.device = 0;
  if (S_ISREG(status.st_mode)) {
    info.kind = shm::FdKind::kFile;
    info.device = EncodeDevice(status.st_dev);
  } else if (S_ISFIFO(status.st_mode)) {
    info.kind = shm::FdKind::kPipe;
  } else if (S_ISSOCK(status.st_mode)) {
    info.kind = SocketKind(SocketOption(fd, SO_DOMAIN), SocketOption(fd, SO_TYPE), SocketOption(fd, SO_PROTOCOL));
  } else {
    info.kind = shm::FdKind::kOther;
  }
  uint64_t classified = (entry_seen & fd_bits::kGenerationMask) | MakeFdEntry(info);
  if (static_cast<uint32_t>(fd) < g_fd_table_size) {
    uint64_t expected = entry_seen;
    // Fails when the fd was closed, reopened or given a role meanwhile; the
    // next counted call then classifies again.
    g_fd_entries[fd].compare_exchange_strong(expected, classified, std::memory_order_acq_rel);
  }
  *classified_entry = classified;
  return info.kind;
}

}  // namespace limpwatch::hooks
