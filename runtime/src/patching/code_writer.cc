#include "patching/code_writer.h"

#include <dirent.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "process.h"

namespace limpwatch::runtime::patching {
namespace {

int Membarrier(int command) { return static_cast<int>(syscall(__NR_membarrier, command, 0, 0)); }

bool SerializeAllCores() { return Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) == 0; }

std::vector<uint64_t> PagesOf(std::span<const SledWrite> writes) {
  uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::vector<uint64_t> pages;
  for (const SledWrite& write : writes) {
    pages.push_back(write.address & ~(page_size - 1));
    pages.push_back((write.address + kSledSize - 1) & ~(page_size - 1));  // a sled may straddle two pages
  }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  return pages;
}

void SetProtection(const std::vector<uint64_t>& pages, size_t count, int protection) {
  uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  for (size_t index = 0; index < count; ++index) {
    mprotect(reinterpret_cast<void*>(pages[index]), page_size, protection);
  }
}

void StoreByte(uint64_t address, uint8_t value) {
  __atomic_store_n(reinterpret_cast<uint8_t*>(address), value, __ATOMIC_RELAXED);
}

// Whether `matches(tid)` holds for some thread of the process that is not
// one of limpwatch's own. True when the task list cannot be read.
template <typename Predicate>
bool AnyProgramThread(Predicate matches) {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return true;
  bool found = false;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    pid_t tid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (!IsLimpwatchThread(tid) && matches(tid)) {
      found = true;
      break;
    }
  }
  closedir(tasks);
  return found;
}

}  // namespace

bool CanSerializeAllCores() {
  int supported = Membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) == 0) return false;
  return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0;
}

bool OtherProgramThreadsRun() {
  return AnyProgramThread([self = gettid()](pid_t tid) { return tid != self; });
}

bool ProgramThreadBlocksSigtrap() {
  return AnyProgramThread([](pid_t tid) {
    std::ifstream status("/proc/self/task/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("SigBlk:", 0) != 0) continue;
      uint64_t blocked = std::strtoull(line.c_str() + 7, nullptr, 16);
      return (blocked & (uint64_t{1} << (SIGTRAP - 1))) != 0;
    }
    return !status.eof();  // unreadable: assume the worst; gone: it blocks nothing
  });
}

bool WriteSleds(std::span<const SledWrite> writes, bool alone, std::string* error) {
  if (writes.empty()) return true;
  std::vector<uint64_t> pages = PagesOf(writes);
  uint64_t page_size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  for (size_t index = 0; index < pages.size(); ++index) {
    if (mprotect(reinterpret_cast<void*>(pages[index]), page_size, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
      *error = std::string("cannot make code writable (mprotect: ") + std::strerror(errno) + ")";
      SetProtection(pages, index, PROT_READ | PROT_EXEC);
      return false;
    }
  }
  if (alone) {
    // A signal handler of the program could run a half-written sled on this
    // very thread: none is delivered until the writes are done.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    for (const SledWrite& write : writes) {
      std::memcpy(reinterpret_cast<void*>(write.address), write.bytes.data(), kSledSize);
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  } else {
    for (const SledWrite& write : writes) StoreByte(write.address, kTrapOpcode);
    if (!SerializeAllCores()) {
      // The process registered just before, so this does not happen; if it
      // did, going on could let a core decode a torn instruction. Every
      // other byte is unchanged, so a core sees the old sled or the int3:
      // the sleds stay int3 for good and their calls go untraced.
      SetProtection(pages, pages.size(), PROT_READ | PROT_EXEC);
      *error = std::string("membarrier(SYNC_CORE) failed: ") + std::strerror(errno) + "; sleds left as int3";
      return false;
    }
    for (const SledWrite& write : writes) {
      for (uint64_t offset = 1; offset < kSledSize; ++offset) StoreByte(write.address + offset, write.bytes[offset]);
    }
    SerializeAllCores();  // cannot fail once the first one succeeded
    for (const SledWrite& write : writes) StoreByte(write.address, write.bytes[0]);
    SerializeAllCores();
  }
  SetProtection(pages, pages.size(), PROT_READ | PROT_EXEC);
  return true;
}

}  // namespace limpwatch::runtime::patching
