// The sampler's settings, read once from the environment at start-up.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLER_CONFIG_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLER_CONFIG_H_

#include <cstddef>
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

// Where the perf events sit (LIMPWATCH_SAMPLE_EVENTS).
//
// Per thread: one event per (thread, CPU), inherited by new threads. The
// kernel switches a thread's events out and in with the thread, and a
// cpu-clock event re-arms its timer each time; on this VM that re-arming
// reprograms the timer through the hypervisor, and a server that hands each
// request from thread to thread paid for it on every switch: the test-bed's
// postmark servers used 1.5-2x the CPU of the same servers unsampled
// (tools/bench/testbed_overhead.sh).
// Per CPU: one event per CPU for every task, whose samples are kept when
// they are this process's. Nothing happens at a context switch; the cost is
// `rate_hz` timer interrupts a second on every CPU, busy or idle, whoever
// runs. It needs the right to watch every task (root, CAP_PERFMON or
// perf_event_paranoid <= 0). Auto takes it where that is granted and the
// machine has at most kMaxCpusForPerCpuEvents CPUs (beyond that the
// interrupts on idle CPUs cost more than the switches save), per thread
// otherwise.
enum class EventPlacement { kAuto, kPerCpu, kPerThread };
inline constexpr size_t kMaxCpusForPerCpuEvents = 16;

struct SamplerConfig {
  uint32_t rate_hz = kDefaultSampleHz;  // LIMPWATCH_SAMPLE_HZ; 0 turns the sampler off
  bool system_wide = false;             // LIMPWATCH_SAMPLE_SYSTEM=1: also the node's kernel profile (root)
  EventPlacement placement = EventPlacement::kAuto;  // LIMPWATCH_SAMPLE_EVENTS=auto|cpu|thread
  // LIMPWATCH_SAMPLE_SHARE=0: per-CPU events of this process's own instead
  // of the node's shared set (node_sample_sharing.h).
  bool share_events = true;
};

// Reads LIMPWATCH_SAMPLE_HZ, LIMPWATCH_SAMPLE_SYSTEM, LIMPWATCH_SAMPLE_EVENTS
// and LIMPWATCH_SAMPLE_SHARE. A bad value is
// reported in *problems (one line each, naming the variable) and its default
// is kept.
SamplerConfig ReadSamplerConfig(std::vector<std::string>* problems);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_SAMPLER_CONFIG_H_
