// memory-hog: anonymous memory touched page by page up to the target size,
// then held (resident) until told to stop.
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/json_line.h"
#include "hog/hog.h"

namespace limpwatch::testbed::hog {

int RunMemoryGrower(uint64_t mib, uint64_t rate_mibps) {
  const uint64_t bytes = mib << 20;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", std::string("mmap: ") + strerror(errno)));
    return 1;
  }
  auto* pages = static_cast<volatile char*>(memory);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t step = 1 << 20;  // touch a MiB, then pace
  const long pause_ns = static_cast<long>(1e9 / double(rate_mibps));
  for (uint64_t offset = 0; offset < bytes && !stop_requested.load(); offset += step) {
    for (uint64_t at = offset; at < offset + step && at < bytes; at += page) pages[at] = 1;
    timespec pause{0, pause_ns};
    nanosleep(&pause, nullptr);
  }
  EmitJsonLine(JsonLine().Add("event", "memory-hog").Add("resident_target_mib", mib));
  while (!stop_requested.load()) {
    timespec tick{0, 100000000};
    nanosleep(&tick, nullptr);
  }
  munmap(memory, bytes);
  return 0;
}

}  // namespace limpwatch::testbed::hog
