// The sample profile in `limpwatch dump --json`.
#include <string_view>

#include "format.h"
#include "sample_profile.h"

namespace limpwatch::cli {
namespace {

std::string_view ImageKindName(shm::ImageKind kind) {
  switch (kind) {
    case shm::ImageKind::kExecutable: return "executable";
    case shm::ImageKind::kSharedLibrary: return "shared_library";
    case shm::ImageKind::kKernel: return "kernel";
    case shm::ImageKind::kNodeKernel: return "node_kernel";
    case shm::ImageKind::kUnknown: break;
  }
  return "unknown";
}

void WriteRows(JsonWriter* json, std::string_view key, const std::vector<SampleRow>& rows) {
  json->Key(key);
  json->BeginArray();
  for (const auto& row : rows) {
    json->BeginObject();
    json->Field("application", row.application);
    json->Field("image", row.image);
    json->Field("image_kind", ImageKindName(row.image_kind));
    json->Field("function", row.function);
    json->Field("name_hash", FormatHex16(row.name_hash));
    json->Field("samples", row.samples);
    json->Field("kernel_samples", row.kernel_samples);
    json->Field("percent", row.percent);
    json->EndObject();
  }
  json->EndArray();
}

}  // namespace

void WriteSampleProfileJson(JsonWriter* json, const SampleProfile& profile) {
  json->BeginObject();
  json->Field("source", SampleSourceName(profile.source));
  json->Field("rate_hz", profile.rate_hz);
  json->Field("kernel_included", profile.kernel_included);
  json->Field("callchains", profile.callchains);
  json->Field("node_profile", profile.node_profile);
  if (profile.source != shm::SampleSource::kSigprofTimer && profile.source != shm::SampleSource::kOff) {
    json->Field("events", profile.per_cpu_events ? "per-cpu" : "per-thread");
    json->Field("shared_events", profile.shared_events);
  }
  json->Field("samples", profile.samples);
  json->Field("lost", profile.lost);
  json->Field("unknown", profile.unknown);
  json->Field("node_samples", profile.node_samples);
  json->Field("node_idle_samples", profile.node_idle);
  WriteRows(json, "functions", profile.process_rows);
  WriteRows(json, "node_functions", profile.node_rows);
  json->EndObject();
}

}  // namespace limpwatch::cli
