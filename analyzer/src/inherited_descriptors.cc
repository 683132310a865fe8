#include "limpwatch/analyzer/inherited_descriptors.h"

#include <unistd.h>

#include <atomic>

namespace limpwatch::analyzer {
namespace {

constexpr int kSlots = 64;

// A slot holds fd + 1, so that the zero-initialized array is empty before any
// constructor runs.
constinit std::atomic<int> g_slots[kSlots] = {};

}  // namespace

void RegisterAnalyzerDescriptor(int fd) {
  if (fd < 0) return;
  for (auto& slot : g_slots) {
    int expected = 0;
    if (slot.compare_exchange_strong(expected, fd + 1, std::memory_order_acq_rel)) return;
  }
}

void UnregisterAnalyzerDescriptor(int fd) {
  if (fd < 0) return;
  for (auto& slot : g_slots) {
    int expected = fd + 1;
    if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
  }
}

int CloseInheritedAnalyzerDescriptors() {
  int closed = 0;
  for (auto& slot : g_slots) {
    int stored = slot.exchange(0, std::memory_order_acq_rel);
    if (stored > 0 && ::close(stored - 1) == 0) ++closed;
  }
  return closed;
}

}  // namespace limpwatch::analyzer
