#include "client/progress_reporter.h"

#include <unistd.h>

#include <chrono>
#include <cstring>

#include "common/socket_util.h"

namespace limpwatch::testbed::client {
namespace {

constexpr uint64_t kMaxPrintedErrors = 50;
constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

ProgressReporter::ProgressReporter(std::string workload) : workload_(std::move(workload)) {}

ProgressReporter::~ProgressReporter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

double ProgressReporter::ElapsedSeconds() const { return double(MonotonicNs() - start_ns_) / 1e9; }

void ProgressReporter::Start(const JsonLine& details) {
  start_ns_ = last_ns_ = MonotonicNs();
  JsonLine line;
  line.Add("event", "start").Add("workload", workload_).Add("pid", static_cast<int64_t>(getpid()));
  if (!details.empty()) line.AddRaw("details", details.str());
  EmitJsonLine(line);
  thread_ = std::thread([this] { ReportEverySecond(); });
}

void ProgressReporter::ClosePhaseLocked(uint64_t now) {
  if (phases_.empty() || phases_.back().end_ns != 0) return;
  PhaseTotals& open = phases_.back();
  open.end_ns = now;
  open.bytes = bytes_.load() - open.bytes;
  open.ops = ops_.load() - open.ops;
  open.errors = errors_.load() - open.errors;
}

void ProgressReporter::SetPhase(const std::string& phase) {
  {
    std::lock_guard lock(mutex_);
    if (!phase_.empty()) EmitProgress(true);  // close the old phase's partial second
    uint64_t now = MonotonicNs();
    ClosePhaseLocked(now);
    // An open phase holds the counters at its start; ClosePhaseLocked turns them into its totals.
    phases_.push_back({phase, now, 0, bytes_.load(), ops_.load(), errors_.load()});
    phase_ = phase;
  }
  EmitJsonLine(
      JsonLine().Add("event", "phase").Add("workload", workload_).Add("phase", phase).Add("t", ElapsedSeconds()));
}

void ProgressReporter::AddError(const std::string& what, int error) {
  uint64_t count = errors_.fetch_add(1) + 1;
  if (count > kMaxPrintedErrors) return;
  EmitJsonLine(JsonLine()
                   .Add("event", "error")
                   .Add("workload", workload_)
                   .Add("what", what)
                   .Add("errno", error)
                   .Add("error", strerror(error))
                   .Add("t", ElapsedSeconds()));
}

void ProgressReporter::EmitProgress(bool final_partial) {
  uint64_t now = MonotonicNs();
  double interval = double(now - last_ns_) / 1e9;
  if (final_partial && interval < 0.05) return;  // nothing worth a line
  uint64_t bytes = bytes_.load();
  uint64_t ops = ops_.load();
  uint64_t errors = errors_.load();
  double safe_interval = interval > 0 ? interval : 1e-9;
  EmitJsonLine(JsonLine()
                   .Add("event", "progress")
                   .Add("workload", workload_)
                   .Add("phase", phase_)
                   .Add("t", double(now - start_ns_) / 1e9)
                   .Add("interval_s", interval)
                   .Add("bytes", bytes - last_bytes_)
                   .Add("mib_per_s", double(bytes - last_bytes_) / kMiB / safe_interval)
                   .Add("ops", ops - last_ops_)
                   .Add("ops_per_s", double(ops - last_ops_) / safe_interval)
                   .Add("errors", errors - last_errors_));
  last_ns_ = now;
  last_bytes_ = bytes;
  last_ops_ = ops;
  last_errors_ = errors;
}

void ProgressReporter::ReportEverySecond() {
  std::unique_lock lock(mutex_);
  uint64_t next = start_ns_ + 1000000000ull;
  while (!stopping_) {
    uint64_t now = MonotonicNs();
    if (now < next) {
      wake_.wait_for(lock, std::chrono::nanoseconds(next - now));
      continue;
    }
    EmitProgress(false);
    next += 1000000000ull;
  }
}

int ProgressReporter::Finish(bool interrupted, const JsonLine& details) {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::string phases = "[";
  double seconds = 0;
  uint64_t bytes = 0;
  uint64_t ops = 0;
  {
    std::lock_guard lock(mutex_);
    EmitProgress(true);
    uint64_t now = MonotonicNs();
    ClosePhaseLocked(now);
    if (phases_.empty()) {
      seconds = ElapsedSeconds();
      bytes = bytes_.load();
      ops = ops_.load();
    }
    for (const PhaseTotals& phase : phases_) {
      double phase_seconds = double(phase.end_ns - phase.start_ns) / 1e9;
      if (phases.size() > 1) phases += ",";
      phases += JsonLine()
                    .Add("phase", phase.phase)
                    .Add("seconds", phase_seconds)
                    .Add("bytes", phase.bytes)
                    .Add("mib_per_s", phase_seconds > 0 ? double(phase.bytes) / kMiB / phase_seconds : 0.0)
                    .Add("ops", phase.ops)
                    .Add("errors", phase.errors)
                    .str();
      if (phase.phase == "prepare") continue;
      seconds += phase_seconds;
      bytes += phase.bytes;
      ops += phase.ops;
    }
    phases += "]";
  }
  const char* status = interrupted ? "interrupted" : (errors_.load() > 0 ? "errors" : "ok");
  JsonLine line;
  line.Add("event", "done")
      .Add("workload", workload_)
      .Add("status", status)
      .Add("seconds", seconds)
      .Add("bytes", bytes)
      .Add("mib_per_s", seconds > 0 ? double(bytes) / kMiB / seconds : 0.0)
      .Add("ops", ops)
      .Add("ops_per_s", seconds > 0 ? double(ops) / seconds : 0.0)
      .Add("errors", errors_.load())
      .AddRaw("phases", phases);
  if (!details.empty()) line.AddRaw("details", details.str());
  EmitJsonLine(line);
  return std::strcmp(status, "ok") == 0 ? 0 : 1;
}

}  // namespace limpwatch::testbed::client
