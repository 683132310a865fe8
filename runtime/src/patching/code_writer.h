// Rewriting sleds in the program's code, alone or while other threads run.
//
// Pages are made read-write-execute for the duration of a batch, never just
// read-write: another thread may be executing elsewhere on the same page and
// would fault. A system that refuses writable executable pages (SELinux
// execmod, a W^X policy) refuses the batch, and patching is then disabled.
//
// Alone (no thread of the program runs besides the caller): the bytes are
// stored directly, with the caller's signals blocked meanwhile (a handler of
// the program must not run a half-written sled). That is the only way to turn the five 1-byte NOPs into one
// 5-byte NOP, since another thread might be stopped between two of them.
//
// Cross-modifying (other threads run): one 5-byte instruction is replaced by
// another with the int3 protocol, as the Linux kernel's text_poke_bp does:
//   1. byte 0 := int3                     serialize every core
//   2. bytes 1-4 := new bytes 1-4         serialize every core
//   3. byte 0 := new byte 0               serialize every core
// A thread can only ever be at byte 0 of the sled (it is one instruction),
// so after step 1 it either ran the old instruction or traps (sled_trap.h);
// it never decodes a mix. "Serialize every core" is
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE): every running
// thread of the process executes a core-serializing instruction before the
// call returns, and a descheduled one before it runs again. An mprotect
// toggle would also send IPIs but guarantees no serialization, so without
// SYNC_CORE the cross-modifying mode is refused.
//
// The int3 is a synchronous SIGTRAP: a thread that has SIGTRAP blocked and
// runs into it is killed by the kernel (a blocked or ignored synchronous
// signal gets the default action). So the cross-modifying mode is refused
// while any thread of the program blocks SIGTRAP (ProgramThreadBlocksSigtrap);
// a thread that blocks it during the few microseconds of a batch is the
// remaining risk, and the reason patching changes happen only when the
// selection changes.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_CODE_WRITER_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_CODE_WRITER_H_

#include <cstdint>
#include <span>
#include <string>

#include "patching/sled_bytes.h"

namespace limpwatch::runtime::patching {

struct SledWrite {
  uint64_t address;
  SledBytes bytes;
};

// Registers the process for SYNC_CORE membarriers (again after a fork is
// harmless). Returns whether cross-modifying writes are possible.
bool CanSerializeAllCores();

// Whether any thread of the program besides the caller is running
// (limpwatch's own threads never run the program's code and do not count).
// Errs on the side of "yes" when /proc/self/task cannot be read.
bool OtherProgramThreadsRun();

// Whether a thread of the program (not limpwatch's own, which block every
// signal and never run the program's code) has SIGTRAP in its blocked mask.
// Errs on the side of "yes" when /proc/self/task cannot be read.
bool ProgramThreadBlocksSigtrap();

// Writes every sled of `writes`. `alone`: the caller has checked that no
// other thread of the program runs; otherwise the int3 protocol is used and
// the caller has checked CanSerializeAllCores() and that the trap handler is
// in place. Returns false with *error set when a page cannot be made
// writable; nothing is written then.
bool WriteSleds(std::span<const SledWrite> writes, bool alone, std::string* error);

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_CODE_WRITER_H_
