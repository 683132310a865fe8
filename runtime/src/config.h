// The runtime's settings, read once from the environment at start-up.
#ifndef LIMPWATCH_RUNTIME_SRC_CONFIG_H_
#define LIMPWATCH_RUNTIME_SRC_CONFIG_H_

#include <string>
#include <vector>

#include "limpwatch/shm/layout.h"

namespace limpwatch::runtime {

struct RuntimeConfig {
  bool disabled = false;         // LIMPWATCH_DISABLE=1: record nothing, create no segment
  std::string name;              // LIMPWATCH_NAME
  bool keep_segment = false;     // LIMPWATCH_KEEP=1: leave the segment after a normal exit
  bool force_monotonic = false;  // LIMPWATCH_CLOCK=monotonic
  bool quiet = false;            // LIMPWATCH_QUIET=1: no informational log lines
  shm::Geometry geometry;        // LIMPWATCH_MAX_FUNCTIONS / _MAX_THREADS / _STACK_DEPTH
  uint32_t service_interval_ms = 100;  // LIMPWATCH_SERVICE_INTERVAL_MS: names published, periodic tasks checked
  // LIMPWATCH_PATCH=1: patch the selected functions of programs built with
  // -fpatchable-function-entry=5 (runtime/src/patching/patcher.h). Opt-in,
  // because it rewrites the program's code pages.
  bool patch_functions = false;
  // LIMPWATCH_FLOW_SAMPLE: one in N root calls is recorded as a request flow
  // (0: off). LIMPWATCH_FLOW_EVENTS, the events of each thread's ring, is in
  // geometry.flow_events (0 when sampling is off).
  uint32_t flow_sample_every = shm::kDefaultFlowSampleEvery;
};

// Reads the LIMPWATCH_* variables. A bad value is reported in *problems (one
// line each, naming the variable) and its default is kept.
RuntimeConfig ReadConfigFromEnvironment(std::vector<std::string>* problems);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_CONFIG_H_
