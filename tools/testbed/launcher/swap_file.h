// A swap file for the length of a fault: memory-hog lets the server's node
// run out of memory, and on a machine without swap the server's anonymous
// pages could not be taken from it at all.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_SWAP_FILE_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_SWAP_FILE_H_

#include <cstdint>
#include <string>

namespace limpwatch::testbed::launcher {

// Creates `path` (it must not exist) with `mib` MiB allocated, formats it
// with mkswap and turns it on (lowest priority after any swap the machine
// has). On failure whatever was made is undone.
bool AddSwapFile(const std::string& path, uint64_t mib, std::string* error);

// Turns the swap file off (its pages are read back) and removes it. True
// when it is neither active nor present any more; idempotent.
bool RemoveSwapFile(const std::string& path, std::string* error);

// KiB of the swap file in use, from /proc/swaps; -1 when it is not active.
int64_t SwapFileUsedKib(const std::string& path);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_SWAP_FILE_H_
