// The CPU-sample profile of a segment, in the form of seed 002's slide 15:
// application, image, function, samples, plus %; and how it was sampled.
//
// Process rows are this server's own samples (user and, when permitted,
// kernel). Node rows (LIMPWATCH_SAMPLE_SYSTEM=1) are the kernel work of the
// whole node, whoever it was done for, kept apart.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SAMPLE_PROFILE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SAMPLE_PROFILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "json_writer.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {

// The application column of node rows: any task on the node.
inline constexpr const char* kNodeApplication = "(node)";

struct SampleRow {
  std::string application;
  std::string image;
  std::string function;
  shm::ImageKind image_kind = shm::ImageKind::kUnknown;
  uint64_t name_hash = 0;
  uint64_t samples = 0;
  uint64_t kernel_samples = 0;  // kernel samples whose innermost user frame was this function
  double percent = 0;           // of the process's samples; node rows: of the node's non-idle samples
};

struct SampleProfile {
  shm::SampleSource source = shm::SampleSource::kOff;
  uint32_t rate_hz = 0;
  bool kernel_included = false;
  bool callchains = false;
  bool node_profile = false;
  bool per_cpu_events = false;  // one event per CPU for every task, this process's samples kept
  bool shared_events = false;   // those events shared by the node's traced processes
  uint64_t samples = 0;  // the process's samples
  uint64_t lost = 0;
  uint64_t unknown = 0;
  uint64_t node_samples = 0;  // idle included
  uint64_t node_idle = 0;
  std::vector<SampleRow> process_rows;  // most samples first
  std::vector<SampleRow> node_rows;     // most samples first
};

// Everything sampled up to `snapshot`.
SampleProfile BuildSampleProfile(const shm::Snapshot& snapshot);

// What was sampled between two snapshots of one segment (`after` later);
// rows without samples in the interval are left out.
SampleProfile BuildSampleProfile(const shm::Snapshot& before, const shm::Snapshot& after);

using shm::SampleSourceName;

// Text: a summary line, caveat lines, then the process table and (if any)
// the node table, each at most `limit` rows (0: all). Ends with '\n'.
std::string RenderSampleProfileText(const SampleProfile& profile, size_t limit);

// One JSON object: the sampler's settings, the counts and both row lists.
void WriteSampleProfileJson(JsonWriter* json, const SampleProfile& profile);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SAMPLE_PROFILE_H_
