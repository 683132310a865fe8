// What the soak server did, counted by itself: the calls of its known
// traced functions, its reads and writes per fd kind, and a few events.
// Lock-free atomics only, so the signal handler may count too.
#ifndef LIMPWATCH_TOOLS_SOAK_SERVER_SERVER_TALLY_H_
#define LIMPWATCH_TOOLS_SOAK_SERVER_SERVER_TALLY_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "soak_protocol.h"

namespace limpwatch::soak {

struct ServerTally {
  std::atomic<uint64_t> calls[kKnownFunctionCount];
  std::atomic<uint64_t> io_calls[kCountedKindCount][kCountedOpCount];
  std::atomic<uint64_t> io_bytes[kCountedKindCount][kCountedOpCount];
  std::atomic<uint64_t> events[kServerEventCount];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

ServerTally& Tally();

inline void CountCall(KnownFunction function) {
  Tally().calls[static_cast<uint32_t>(function)].fetch_add(1, std::memory_order_relaxed);
}
inline void CountEvent(ServerEvent event, uint64_t amount = 1) {
  Tally().events[static_cast<uint32_t>(event)].fetch_add(amount, std::memory_order_relaxed);
}

// The tally as the lines of soak_protocol.h, every count kTallyDigits wide,
// so the text's length does not depend on the counts.
std::string FormatTally(const ServerTally& tally);

// Writes the tally to `fd` (stdout, a pipe) in one write, which it counts in
// the tally first: the figures include the write that carries them.
bool WriteFinalTally(int fd);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SERVER_SERVER_TALLY_H_
