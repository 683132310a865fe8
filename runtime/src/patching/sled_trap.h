// The SIGTRAP handler that makes a sled being rewritten safe to arrive at.
//
// While a sled changes between a 5-byte NOP and a call (code_writer.h), its
// first byte is int3 for a moment. A thread that executes it traps with RIP
// just past the int3; the handler moves RIP to the end of the sled, so the
// function runs on without the call: that one call goes untraced, nothing
// else changes (both forms of the sled only call limpwatch). The handler
// recognizes every sled limpwatch may ever rewrite, not just the ones being
// rewritten now, because the trapping thread may run its handler only after
// the writer has finished. Any other SIGTRAP goes to the handler that was
// installed before (or gets the default action).
//
// The table of sleds is fixed when the handler is installed and never freed.
// The call sites of compiler hooks that limpwatch rewrites are recognized
// too (call_site_table.h); their table grows as sites are learned.
#ifndef LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_TRAP_H_
#define LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_TRAP_H_

#include <cstdint>
#include <vector>

namespace limpwatch::runtime::patching {

// Installs the handler for these sled addresses. Once per process; returns
// false (and installs nothing) when sigaction fails or it was installed before.
bool InstallSledTrapHandler(std::vector<uint64_t> sleds);

// Installs the handler with no sled of its own unless it is installed
// already; for the call sites. Returns whether it is in place.
bool EnsureSledTrapHandler();

// Whether SIGTRAP still reaches our handler: the program may have installed
// its own since, and then no sled may be rewritten while other threads run.
bool SledTrapHandlerInPlace();

}  // namespace limpwatch::runtime::patching

#endif  // LIMPWATCH_RUNTIME_SRC_PATCHING_SLED_TRAP_H_
