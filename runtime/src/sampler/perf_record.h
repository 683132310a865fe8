// Decoding the records of a sampling perf_event ring.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_RECORD_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_RECORD_H_

#include <linux/perf_event.h>

#include <cstdint>

namespace limpwatch::runtime {

// What the sampler asks the kernel to record per sample. The callchain, when
// present, is the user part only (exclude_callchain_kernel): the kernel
// function is the instruction pointer itself.
inline constexpr uint64_t kSampleTypeBase = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
inline constexpr uint64_t kSampleTypeWithCallchain = kSampleTypeBase | PERF_SAMPLE_CALLCHAIN;

struct DecodedSample {
  uint64_t ip = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool in_kernel = false;
  uint64_t user_ip = 0;  // innermost user-space frame; 0 when unknown (kernel thread, no callchain)
};

// Decodes a PERF_RECORD_SAMPLE written with `sample_type` (one of the two
// above). Returns false for a record too short for its fields.
bool DecodeSample(const perf_event_header& record, uint64_t sample_type, DecodedSample* out);

// The count of a PERF_RECORD_LOST record (0 for a malformed one).
uint64_t DecodeLostCount(const perf_event_header& record);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_PERF_RECORD_H_
