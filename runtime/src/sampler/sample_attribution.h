// Turns sampled instruction pointers into counts of the segment's
// SampleTable: image (executable, shared library, kernel) and function.
//
// User addresses are named by the runtime's Symbolizer (ELF symbol tables)
// or, in the vDSO, from its image in memory; kernel addresses by /proc/kallsyms, loaded on the first kernel sample.
// Every address is resolved once and cached; the cache is bounded and
// simply cleared when it fills up. Not thread-safe: the sampler calls it
// under its mutex.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_ATTRIBUTION_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_ATTRIBUTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "limpwatch/shm/segment.h"
#include "sampler/kernel_symbols.h"
#include "sampler/sample_table.h"
#include "sampler/vdso_symbols.h"

namespace limpwatch::runtime {

class SampleAttribution {
 public:
  // Writes into `view`'s sample table.
  explicit SampleAttribution(const shm::SegmentView& view);

  // After fork: the child writes a new segment; cached entries point into
  // the parent's, so the caches go. Kernel symbols are kept.
  void Retarget(const shm::SegmentView& view);

  // A sample of this process: `ip` is in the kernel when `in_kernel`, and
  // then `user_ip` (0 if unknown) is the innermost user frame under it.
  void CountProcessSample(uint64_t ip, bool in_kernel, uint64_t user_ip);

  // A kernel sample of any task (the node's kernel profile).
  void CountNodeSample(uint64_t ip);

  // Samples the kernel (or a full ring) dropped.
  void CountLost(uint64_t samples);

  SampleTable& table() { return table_; }

 private:
  struct Lookup {
    shm::SampledFunction* entry = nullptr;  // null: no symbol covers the address
    bool table_full = false;                // a new function found no room
    bool idle = false;                      // the kernel's idle loop (node profile only)
  };
  Lookup UserFunction(uint64_t address);
  Lookup KernelFunction(uint64_t address, bool node);
  // Counts one sample of `lookup` into `counter` of its entry, or as unknown / lost.
  void CountInto(const Lookup& lookup, std::atomic<uint64_t> shm::SampledFunction::*counter, bool count_unknown);

  SampleTable table_;
  VdsoSymbols vdso_ = VdsoSymbols::Load();
  std::string program_;
  std::unordered_map<uint64_t, Lookup> user_cache_;
  std::unordered_map<uint64_t, Lookup> kernel_cache_;
  std::unordered_map<uint64_t, Lookup> node_cache_;
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLE_ATTRIBUTION_H_
