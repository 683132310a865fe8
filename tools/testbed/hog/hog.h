// limpwatch-testbed-hog: the competing processes some fault injectors start.
// Each runs until SIGTERM / SIGINT and prints one JSON line when it starts.
#ifndef LIMPWATCH_TOOLS_TESTBED_HOG_HOG_H_
#define LIMPWATCH_TOOLS_TESTBED_HOG_HOG_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace limpwatch::testbed::hog {

extern std::atomic<bool> stop_requested;

// Reads `device` with O_DIRECT in blocks of block_bytes at random aligned offsets.
int RunDiskReader(const std::string& device, uint64_t block_bytes);
// Spins, pinned to `cpu` unless it is negative.
int RunCpuSpinner(int cpu);
// Grows to `mib` MiB of touched anonymous memory at rate_mibps, then keeps
// touching it, page after page, at the same rate.
int RunMemoryGrower(uint64_t mib, uint64_t rate_mibps);
// Keeps the file system holding `ballast` full, growing it every poll_ms.
int RunSpaceFiller(const std::string& ballast, uint64_t poll_ms);

}  // namespace limpwatch::testbed::hog

#endif  // LIMPWATCH_TOOLS_TESTBED_HOG_HOG_H_
