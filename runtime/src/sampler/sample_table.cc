#include "sampler/sample_table.h"

#include <algorithm>
#include <cstring>

namespace limpwatch::runtime {
namespace {

template <size_t N>
void CopyName(std::string_view text, char (&into)[N]) {
  size_t length = std::min(text.size(), N - 1);
  std::memcpy(into, text.data(), length);
  std::memset(into + length, 0, N - length);
}

}  // namespace

shm::SampledFunction* SampleTable::FindOrInsert(uint64_t name_hash, std::string_view name, std::string_view image,
                                                shm::ImageKind kind) {
  if (capacity_ == 0) return nullptr;
  uint32_t mask = capacity_ - 1;
  for (uint32_t probe = 0; probe < capacity_; ++probe) {
    shm::SampledFunction& entry = entries_[(name_hash + probe) & mask];
    uint64_t existing = entry.name_hash.load(std::memory_order_relaxed);
    if (existing == name_hash) return &entry;
    if (existing != 0) continue;
    CopyName(name, entry.name);
    CopyName(image, entry.image);
    entry.image_kind = static_cast<uint32_t>(kind);
    entry.name_hash.store(name_hash, std::memory_order_release);
    return &entry;
  }
  return nullptr;
}

}  // namespace limpwatch::runtime
