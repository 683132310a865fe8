// What each file descriptor of the process is, so that an I/O call is
// counted under the right kind of file.
//
// One 64-bit word per fd number, indexed by the fd, in a fixed table of
// kFdTableSize entries (zero pages until used). The hot path reads its word
// with one relaxed load and no lock:
//
//   63            32 31          6 5    4 3        2      0
//   +---------------+-------------+------+---------+------+
//   | device        | generation  | role | checked | kind |
//   +---------------+-------------+------+---------+------+
//
//   kind        0 unknown, else FdKind + 1
//   checked     the kind was confirmed by the fd itself (fstat, socket()
//               arguments, pipe()); an unchecked kFile is what open() left: a
//               path was opened, but it may be a FIFO or a device
//   role        0 none, else SocketRole + 1 (accept() or connect() made it)
//   generation  bumped by every change, so a classification computed for an
//               older generation is never installed
//   device      st_dev of a regular file, encoded like the kernel's new_encode_dev
//
// Calls that create an fd (open, socket, accept, pipe, dup) store what they
// know; close marks the entry unknown *before* the real close, so the number
// can never be reused while still carrying the old kind. An unknown or
// unchecked entry is classified on its first counted use after the call
// returns (fstat, getsockopt) -- an unchecked file on one transfer in 32
// (io_accounting.h), counted as a file until then -- and installed with a compare-and-swap against
// the generation read before, so a close racing with the classification wins.
// fds at or beyond the table's size (kFdTableSize, or less with
// LIMPWATCH_FD_TABLE_SIZE) are classified by fstat / getsockopt on every
// counted call, and have no role: their socket reads count in neither
// nsread nor ncread.
//
// Every function may be called from any thread, including signal handlers.
#ifndef LIMPWATCH_HOOKS_SRC_FD_TABLE_H_
#define LIMPWATCH_HOOKS_SRC_FD_TABLE_H_

#include <atomic>
#include <cstdint>

#include "limpwatch/shm/layout.h"
#include "thread_state.h"

namespace limpwatch::hooks {

inline constexpr uint32_t kFdTableSize = 65536;

// The entries in use: kFdTableSize unless LIMPWATCH_FD_TABLE_SIZE (16-65536)
// says fewer. Set once at load.
extern uint32_t g_fd_table_size;

// The decoded form of an entry.
struct FdInfo {
  bool known = false;    // kind is meaningful
  bool checked = false;  // and confirmed by the fd itself
  shm::FdKind kind = shm::FdKind::kOther;
  bool has_role = false;
  shm::SocketRole role = shm::SocketRole::kAccepted;
  uint32_t device = 0;   // encoded st_dev, regular files only
};

namespace fd_bits {
inline constexpr uint64_t kKindMask = 0x7;
inline constexpr uint64_t kChecked = 0x8;
inline constexpr unsigned kRoleShift = 4;
inline constexpr uint64_t kRoleMask = uint64_t{0x3} << kRoleShift;
inline constexpr unsigned kGenerationShift = 6;
inline constexpr uint64_t kGenerationMask = ((uint64_t{1} << 26) - 1) << kGenerationShift;
inline constexpr unsigned kDeviceShift = 32;
}  // namespace fd_bits

extern std::atomic<uint64_t> g_fd_entries[kFdTableSize];

// The entry of `fd`; 0 (unknown) for numbers outside the table.
LW_HOT uint64_t LoadFdEntry(int fd) {
  if (__builtin_expect(static_cast<uint32_t>(fd) >= g_fd_table_size, 0)) return 0;
  return g_fd_entries[fd].load(std::memory_order_relaxed);
}

// An entry whose kind can be used as it is, without asking the kernel.
LW_HOT bool IsCheckedEntry(uint64_t entry) { return (entry & fd_bits::kChecked) != 0; }

// What open() leaves: a file by the path's account, not confirmed yet.
LW_HOT bool IsUncheckedFileEntry(uint64_t entry) {
  return (entry & (fd_bits::kChecked | fd_bits::kKindMask)) == static_cast<uint64_t>(shm::FdKind::kFile) + 1;
}

LW_HOT shm::FdKind EntryKind(uint64_t entry) {
  return static_cast<shm::FdKind>((entry & fd_bits::kKindMask) - 1);
}

// 0 for none, else SocketRole + 1.
LW_HOT uint32_t EntryRoleCode(uint64_t entry) {
  return static_cast<uint32_t>((entry & fd_bits::kRoleMask) >> fd_bits::kRoleShift);
}

FdInfo DecodeFdEntry(uint64_t entry);

// Builds the low bits of an entry (no generation).
uint64_t MakeFdEntry(const FdInfo& info);

// A new object now lives at `fd`: replaces the entry with `info` (bumping the
// generation). Ignores fds outside the table.
void NoteFdOpened(int fd, const FdInfo& info);

// `fd` is about to be closed (or replaced by dup2): its entry becomes unknown.
void NoteFdClosing(int fd);

// Marks every fd in [first, last] as closing (close_range, closefrom).
void NoteFdRangeClosing(unsigned first, unsigned last);

// `target` now refers to the same open file as `source` (dup family): copies
// the source's classification and role.
void NoteFdDuplicated(int source, int target);

// Sets the role of a socket (accept, connect) without touching its kind.
void NoteFdRole(int fd, shm::SocketRole role);

// Asks the kernel what `fd` is (fstat, getsockopt) and, if the entry still
// has the generation of `entry_seen`, installs the answer. Returns the kind
// to count the call under: kOther when the fd is not open. May change errno.
[[gnu::cold]] shm::FdKind ClassifyFd(int fd, uint64_t entry_seen, uint64_t* classified_entry);

// The kind of a socket from its socket() arguments; kOther for families we
// do not tell apart.
shm::FdKind SocketKind(int domain, int type, int protocol);

}  // namespace limpwatch::hooks

#endif  // LIMPWATCH_HOOKS_SRC_FD_TABLE_H_
