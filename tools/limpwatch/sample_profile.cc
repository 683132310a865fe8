#include "sample_profile.h"

#include <algorithm>
#include <map>

namespace limpwatch::cli {
namespace {

uint64_t Delta(uint64_t before, uint64_t after) { return after >= before ? after - before : 0; }

double Percent(uint64_t part, uint64_t whole) { return whole == 0 ? 0.0 : 100.0 * double(part) / double(whole); }

SampleProfile Settings(const shm::SampleSnapshot& samples) {
  SampleProfile profile;
  profile.source = static_cast<shm::SampleSource>(samples.source);
  profile.rate_hz = samples.rate_hz;
  profile.kernel_included = (samples.flags & shm::kSamplesIncludeKernel) != 0;
  profile.callchains = (samples.flags & shm::kSamplesHaveCallchains) != 0;
  profile.node_profile = (samples.flags & shm::kSamplesNodeProfile) != 0;
  profile.per_cpu_events = (samples.flags & shm::kSamplesPerCpuEvents) != 0;
  profile.shared_events = (samples.flags & shm::kSamplesSharedEvents) != 0;
  return profile;
}

void AddRow(const shm::SampledFunctionRecord& record, uint64_t samples, uint64_t kernel_samples,
            const std::string& program, SampleProfile* profile) {
  if (samples == 0 && kernel_samples == 0) return;
  SampleRow row;
  bool node = record.image_kind == shm::ImageKind::kNodeKernel;
  row.application = node ? kNodeApplication : program;
  row.image = record.image;
  row.function = record.name;
  row.image_kind = record.image_kind;
  row.name_hash = record.name_hash;
  row.samples = samples;
  row.kernel_samples = kernel_samples;
  (node ? profile->node_rows : profile->process_rows).push_back(std::move(row));
}

void Finish(SampleProfile* profile) {
  for (auto& row : profile->process_rows) row.percent = Percent(row.samples, profile->samples);
  uint64_t node_busy = profile->node_samples - std::min(profile->node_idle, profile->node_samples);
  for (auto& row : profile->node_rows) row.percent = Percent(row.samples, node_busy);
  auto order = [](const SampleRow& a, const SampleRow& b) {
    if (a.samples != b.samples) return a.samples > b.samples;
    if (a.kernel_samples != b.kernel_samples) return a.kernel_samples > b.kernel_samples;
    return a.function < b.function;  // ties in a stable order: rows do not swap every refresh
  };
  std::sort(profile->process_rows.begin(), profile->process_rows.end(), order);
  std::sort(profile->node_rows.begin(), profile->node_rows.end(), order);
}

}  // namespace

SampleProfile BuildSampleProfile(const shm::Snapshot& snapshot) {
  const shm::SampleSnapshot& samples = snapshot.samples;
  SampleProfile profile = Settings(samples);
  profile.samples = samples.samples_total;
  profile.lost = samples.samples_lost;
  profile.unknown = samples.samples_unknown;
  profile.node_samples = samples.node_samples_total;
  profile.node_idle = samples.node_samples_idle;
  for (const auto& record : samples.functions) {
    AddRow(record, record.samples, record.kernel_samples, snapshot.program, &profile);
  }
  Finish(&profile);
  return profile;
}

SampleProfile BuildSampleProfile(const shm::Snapshot& before, const shm::Snapshot& after) {
  const shm::SampleSnapshot& old_samples = before.samples;
  const shm::SampleSnapshot& samples = after.samples;
  SampleProfile profile = Settings(samples);
  profile.samples = Delta(old_samples.samples_total, samples.samples_total);
  profile.lost = Delta(old_samples.samples_lost, samples.samples_lost);
  profile.unknown = Delta(old_samples.samples_unknown, samples.samples_unknown);
  profile.node_samples = Delta(old_samples.node_samples_total, samples.node_samples_total);
  profile.node_idle = Delta(old_samples.node_samples_idle, samples.node_samples_idle);
  std::map<uint64_t, const shm::SampledFunctionRecord*> earlier;
  for (const auto& record : old_samples.functions) earlier[record.name_hash] = &record;
  for (const auto& record : samples.functions) {
    auto found = earlier.find(record.name_hash);
    uint64_t old_count = found == earlier.end() ? 0 : found->second->samples;
    uint64_t old_kernel = found == earlier.end() ? 0 : found->second->kernel_samples;
    AddRow(record, Delta(old_count, record.samples), Delta(old_kernel, record.kernel_samples), after.program,
           &profile);
  }
  Finish(&profile);
  return profile;
}


}  // namespace limpwatch::cli
