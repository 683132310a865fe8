// The gate that keeps the library's own threads out of fork().
//
// The service and analyzer threads allocate and take locks while they work.
// fork() copies only the forking thread: if one of them was inside the
// allocator or held a lock at that moment, the child inherits the lock held
// by a thread it does not have, and hangs at its first use. The C library
// takes its own malloc locks around fork, but not every allocator does
// (AddressSanitizer's in GCC 12 does not: the child of a traced program hung
// at exit), and no library takes ours. So these threads work inside a gate:
// fork closes it first, waits until no thread is inside, and opens it again
// when the fork is done.
//
// The wait is bounded (kForkGateWaitMs): a thread stuck inside must not stop
// the program from forking. The parent then hears how many were still
// inside.
//
// Only threads whose work takes no lock that another fork handler holds may
// use the gate: the prepare handlers registered after the gate's run before
// it, and a thread waiting for their locks inside the gate would hold the
// fork up until the bound. (The sampler's reader works under the sampler's
// own mutex, which its fork handler takes, and stays out.)
#pragma once

#include <cstdint>

namespace limpwatch::runtime {

inline constexpr uint64_t kForkGateWaitMs = 1000;

// Called in the parent after a fork that went ahead while `inside` threads
// were still in the gate.
using BusyForkReport = void (*)(uint32_t inside);

// Registers the gate's fork handlers, once per process image (a no-op in a
// forked child, which inherits them). Register after the fork handlers
// whose locks the gated threads take, so that the gate closes before them.
void InstallForkGate(BusyForkReport report);

// Enters the gate, waiting while a fork is under way. Not reentrant.
void EnterForkGate();
void LeaveForkGate();

// Whether this thread is inside the gate.
bool InsideForkGate();

// Inside the gate for its lifetime, except while Outside() holds.
class ForkGateScope {
 public:
  ForkGateScope() { EnterForkGate(); }
  ~ForkGateScope() {
    if (InsideForkGate()) LeaveForkGate();
  }
  ForkGateScope(const ForkGateScope&) = delete;
  ForkGateScope& operator=(const ForkGateScope&) = delete;

  // Out of the gate while it lives: for sleeps between rounds of work.
  class Outside {
   public:
    Outside() { LeaveForkGate(); }
    ~Outside() { EnterForkGate(); }
    Outside(const Outside&) = delete;
    Outside& operator=(const Outside&) = delete;
  };
};

}  // namespace limpwatch::runtime
