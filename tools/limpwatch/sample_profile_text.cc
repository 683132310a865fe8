// `limpwatch top --samples` and the SAMPLES section of `limpwatch dump`.
#include <algorithm>
#include <string>

#include "format.h"
#include "sample_profile.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

std::string SettingsLine(const SampleProfile& profile) {
  std::string line = "sampler " + std::string(SampleSourceName(profile.source));
  if (profile.source == shm::SampleSource::kOff) {
    line += profile.samples == 0 ? " (LIMPWATCH_SAMPLE_HZ=0, or refused: see the program's log)"
                                 : " (stopped: see the program's log)";
  } else {
    line += ", " + std::to_string(profile.rate_hz) + " Hz per thread of CPU time";
    line += profile.kernel_included ? ", kernel samples included" : ", user space only";
    if (profile.callchains) line += ", callchains";
    if (profile.node_profile) line += ", node kernel profile";
    if (profile.source != shm::SampleSource::kSigprofTimer) {
      line += profile.per_cpu_events ? ", per-CPU events" : ", per-thread events";
      if (profile.shared_events) line += " shared by the node's traced processes";
    }
  }
  line += "\nsamples " + std::to_string(profile.samples) + "  lost " + std::to_string(profile.lost) +
          "  unknown " + std::to_string(profile.unknown) + "\n";
  return line;
}

// What these samples cannot show, said where the numbers are read.
std::string CaveatLines(const SampleProfile& profile) {
  if (profile.source == shm::SampleSource::kOff) return {};
  std::string lines;
  if (profile.source == shm::SampleSource::kSigprofTimer) {
    lines += "note: SIGPROF samples see user space only; time in the kernel is counted in the system-call "
             "wrapper that entered it\n";
  } else if (!profile.kernel_included) {
    lines += "note: kernel samples not permitted (perf_event_paranoid; root or CAP_PERFMON allows them): "
             "user space only\n";
  }
  if (!profile.node_profile) {
    lines += "note: kernel work done for this server in softirq context (TCP receive, ACKs, retransmits) is "
             "charged to whatever task it interrupts or to ksoftirqd, so this process's samples miss it; "
             "LIMPWATCH_SAMPLE_SYSTEM=1 (root) adds the node's kernel profile\n";
  }
  return lines;
}

std::string RowsTable(const std::vector<SampleRow>& rows, size_t limit, bool with_kernel_under) {
  std::vector<Column> columns = {{"APPLICATION"}, {"IMAGE"}, {"FUNCTION"}, {"SAMPLES", Align::kRight},
                                 {"%", Align::kRight}};
  if (with_kernel_under) columns.push_back({"KERNEL UNDER", Align::kRight});
  Table table(columns);
  size_t shown = limit == 0 ? rows.size() : std::min(limit, rows.size());
  for (size_t index = 0; index < shown; ++index) {
    const SampleRow& row = rows[index];
    std::vector<std::string> cells = {row.application, row.image, row.function, std::to_string(row.samples),
                                      FormatFixed(row.percent, 1)};
    if (with_kernel_under) cells.push_back(std::to_string(row.kernel_samples));
    table.AddRow(std::move(cells));
  }
  std::string out = table.Render();
  if (shown < rows.size()) out += "(" + std::to_string(rows.size() - shown) + " more functions not shown)\n";
  return out;
}

}  // namespace

std::string RenderSampleProfileText(const SampleProfile& profile, size_t limit) {
  std::string out = SettingsLine(profile) + CaveatLines(profile);
  if (profile.process_rows.empty()) {
    out += "(no samples)\n";
  } else {
    // KERNEL UNDER: kernel samples whose innermost user frame was this function.
    out += RowsTable(profile.process_rows, limit, profile.kernel_included);
  }
  if (profile.node_profile) {
    uint64_t busy = profile.node_samples - std::min(profile.node_idle, profile.node_samples);
    uint64_t attributed = 0;
    for (const auto& row : profile.node_rows) attributed += row.samples;
    out += "\nNODE KERNEL PROFILE (all CPUs, any task)  samples " + std::to_string(profile.node_samples) +
           "  idle " + std::to_string(profile.node_idle) + "  unknown " +
           std::to_string(busy - std::min(attributed, busy)) + "\n";
    out += profile.node_rows.empty() ? "(no kernel work sampled)\n" : RowsTable(profile.node_rows, limit, false);
  }
  return out;
}

}  // namespace limpwatch::cli
