#include "sampler/perf_record.h"

#include <cstring>

namespace limpwatch::runtime {
namespace {

// Reads the u64 at `*offset` of the record and advances; false past its end.
bool ReadWord(const perf_event_header& record, size_t* offset, uint64_t* out) {
  if (*offset + sizeof(uint64_t) > record.size) return false;
  std::memcpy(out, reinterpret_cast<const uint8_t*>(&record) + *offset, sizeof(uint64_t));
  *offset += sizeof(uint64_t);
  return true;
}

}  // namespace

bool DecodeSample(const perf_event_header& record, uint64_t sample_type, DecodedSample* out) {
  size_t offset = sizeof(perf_event_header);
  uint64_t word = 0;
  // Field order is fixed by the ABI: ip, then pid/tid, then the callchain.
  if (!ReadWord(record, &offset, &out->ip)) return false;
  if (!ReadWord(record, &offset, &word)) return false;
  out->pid = static_cast<uint32_t>(word);
  out->tid = static_cast<uint32_t>(word >> 32);
  uint16_t mode = record.misc & PERF_RECORD_MISC_CPUMODE_MASK;
  out->in_kernel = mode == PERF_RECORD_MISC_KERNEL;
  out->user_ip = out->in_kernel ? 0 : out->ip;
  if ((sample_type & PERF_SAMPLE_CALLCHAIN) == 0) return true;

  uint64_t frames = 0;
  if (!ReadWord(record, &offset, &frames)) return false;
  bool in_user_part = false;
  for (uint64_t index = 0; index < frames; ++index) {
    if (!ReadWord(record, &offset, &word)) return false;
    if (word >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {
      in_user_part = word == static_cast<uint64_t>(PERF_CONTEXT_USER);
      continue;
    }
    if (in_user_part) {
      // The first user entry is where user space left off: the syscall,
      // fault or interrupted instruction under this kernel sample.
      if (out->in_kernel) out->user_ip = word;
      break;
    }
  }
  return true;
}

uint64_t DecodeLostCount(const perf_event_header& record) {
  // struct { header; u64 id; u64 lost; }
  size_t offset = sizeof(perf_event_header) + sizeof(uint64_t);
  uint64_t lost = 0;
  return ReadWord(record, &offset, &lost) ? lost : 0;
}

}  // namespace limpwatch::runtime
