// Writing the segment's SampleTable: one entry per sampled function, keyed
// by its name hash (open addressing, linear probing, never deleted).
//
// Single writer: only the sampler's reader, under the sampler's mutex, calls
// this. An entry's description is written before its name_hash is published
// with a release store, so a reader that sees the hash sees the names.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_TABLE_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_TABLE_H_

#include <cstdint>
#include <string_view>

#include "limpwatch/shm/segment.h"

namespace limpwatch::runtime {

class SampleTable {
 public:
  SampleTable() = default;
  explicit SampleTable(const shm::SegmentView& view)
      : header_(view.sample_table()), entries_(view.sampled_functions()), capacity_(view.sample_capacity()) {}

  bool valid() const { return header_ != nullptr; }
  shm::SampleTableHeader& header() const { return *header_; }

  // The entry keyed `name_hash`, created with this description if new.
  // Returns null when the table is full.
  shm::SampledFunction* FindOrInsert(uint64_t name_hash, std::string_view name, std::string_view image,
                                     shm::ImageKind kind);

  // Counter updates from the single writer: a plain load and store is
  // enough and keeps the bus quiet.
  static void Add(std::atomic<uint64_t>& counter, uint64_t value) {
    counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
  }

 private:
  shm::SampleTableHeader* header_ = nullptr;
  shm::SampledFunction* entries_ = nullptr;
  uint32_t capacity_ = 0;  // a power of two
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_TABLE_H_
