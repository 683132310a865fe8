// Runs the sampler's test programs and reads their sample tables.
#ifndef LIMPWATCH_TESTS_SUPPORT_SAMPLED_RUN_H_
#define LIMPWATCH_TESTS_SUPPORT_SAMPLED_RUN_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "limpwatch/shm/snapshot.h"
#include "support/traced_run.h"

namespace limpwatch::testing {

struct CapturedRun {
  pid_t pid = 0;
  int exit_status = -1;  // WEXITSTATUS, or -1 if it did not exit normally
  std::string out;
  std::string err;
};

// Runs `program args...` with the environment of this process minus every
// LIMPWATCH_* variable, plus `environment`; waits for it and for every
// process holding its stdout or stderr open (a daemon's child included).
CapturedRun RunCapturing(const std::string& program, const std::vector<std::string>& args,
                         const std::vector<std::string>& environment);

// The non-empty lines of `text`.
std::vector<std::string> Lines(const std::string& text);

struct SampledRun {
  std::string name;  // LIMPWATCH_NAME; the caller removes the segments
  CapturedRun run;
  shm::Snapshot snapshot;
};

// Runs `sampled_work args...` (through `sandbox_launcher launcher_options...`
// when those are given) with a kept segment of a unique name, and takes the
// snapshot of the segment of the process it started.
SampledRun RunSampledWork(const std::vector<std::string>& args, std::vector<std::string> environment,
                          const std::vector<std::string>& launcher_options = {});

// The sample-table entry of the function `name` (of any image kind but the
// node's), or null.
const shm::SampledFunctionRecord* Sampled(const shm::Snapshot& snapshot, const std::string& name);

// Its samples, 0 when absent.
uint64_t SamplesOf(const shm::Snapshot& snapshot, const std::string& name);

// Sum of the samples of the entries of one image kind.
uint64_t SamplesOfKind(const shm::Snapshot& snapshot, shm::ImageKind kind);

// A readable dump of the table, for failure messages.
std::string DescribeSamples(const shm::Snapshot& snapshot);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_SAMPLED_RUN_H_
