// memory-hog: anonymous memory touched page by page up to the target size,
// then touched again and again, page after page at the same rate, until told
// to stop: a process using its memory, whose pages reclaim finds recently
// used, so that on a node short of memory it is the other processes' pages
// that go.
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
  // Huge pages where the kernel gives them: touching 4 KiB pages took about
  // 4 ms a MiB on this VM (16 us a fault), so 1 GiB needed 4 s idle and
  // over 7 s under load, slower than the inject's check waits for.
  madvise(memory, bytes, MADV_HUGEPAGE);
  auto* pages = static_cast<volatile char*>(memory);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t step = 1 << 20;  // touch a MiB, then pace
  // Each MiB has its moment on the clock (start + n / rate): time lost to
  // slow faults or a late wake-up is made up, not added to every MiB.
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  const uint64_t start_ns = uint64_t(start.tv_sec) * 1000000000ull + uint64_t(start.tv_nsec);
  uint64_t touched_mib = 0;
  for (uint64_t offset = 0; !stop_requested.load(); offset += step) {
    if (offset >= bytes) {
      if (touched_mib == bytes >> 20) {
        EmitJsonLine(JsonLine().Add("event", "memory-hog").Add("resident_target_mib", mib));
      }
      offset = 0;
    }
    for (uint64_t at = offset; at < offset + step && at < bytes; at += page) pages[at] = char(pages[at] + 1);
    uint64_t due_ns = start_ns + ++touched_mib * 1000000000ull / rate_mibps;
    timespec due{static_cast<time_t>(due_ns / 1000000000ull), static_cast<long>(due_ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr) == EINTR && !stop_requested.load()) {
    }
  }
  munmap(memory, bytes);
  return 0;
}

}  // namespace limpwatch::testbed::hog
