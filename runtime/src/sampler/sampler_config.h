// The sampler's settings, read once from the environment at start-up.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLER_CONFIG_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::runtime {

// Samples per second of CPU time, per thread. A sample costs 6-12 us of CPU
// on the 2-vCPU VM this was measured on (tools/bench/sampler_benchmark), so
// 199 Hz costs 0.15-0.25 % of the CPU a thread uses: room under the 1 %
// budget for the per-context-switch cost of the events and slower machines.
// Below the 250 Hz scheduler tick, so the SIGPROF fallback can keep up.
inline constexpr uint32_t kDefaultSampleHz = 199;
inline constexpr uint32_t kMaxSampleHz = 10000;

struct SamplerConfig {
  uint32_t rate_hz = kDefaultSampleHz;  // LIMPWATCH_SAMPLE_HZ; 0 turns the sampler off
  bool system_wide = false;             // LIMPWATCH_SAMPLE_SYSTEM=1: also the node's kernel profile (root)
};

// Reads LIMPWATCH_SAMPLE_HZ and LIMPWATCH_SAMPLE_SYSTEM. A bad value is
// reported in *problems (one line each, naming the variable) and its default
// is kept.
SamplerConfig ReadSamplerConfig(std::vector<std::string>* problems);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLER_CONFIG_H_
