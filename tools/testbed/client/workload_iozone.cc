// iozonew and iozoner (seed 000 section 4.1): IOzone in write/rewrite and
// read/reread mode. Large records, an fsync after each write phase, and the
// workload changes half-way (write -> rewrite, read -> reread). Each write
// pass writes a new file (truncated first); rewrite overwrites it. With
// --seconds, each half runs for half the time.
#include "client/progress_reporter.h"
#include "client/sequential_pass.h"
#include "client/workloads.h"

namespace limpwatch::testbed::client {
namespace {

// One half of an IOzone run: a phase of timed passes, fsync'd when writing.
bool RunHalf(const WorkloadContext& context, const OpenFile& file, const char* phase, PassKind kind, uint64_t size,
             uint64_t record, double seconds, ProgressReporter* reporter) {
  reporter->SetPhase(phase);
  bool completed = RunTimedPasses(context, file, kind, size, record, seconds, reporter);
  if (kind != PassKind::kRead && !context.interrupted->load()) {
    int error = context.fs->Sync(file);
    if (error != 0) reporter->AddError("fsync", error);
    reporter->AddOps(1);
  }
  return completed;
}

JsonLine IozoneDetails(const std::string& name, uint64_t size, uint64_t record, double seconds) {
  return JsonLine().Add("file", name).Add("size_bytes", size).Add("record_bytes", record).Add("seconds", seconds);
}

}  // namespace

int RunIozoneWrite(const WorkloadContext& context, const WorkloadSettings& settings) {
  uint32_t stripe = StripeSizeOf(context, settings);
  uint64_t record = settings.record_bytes != 0 ? settings.record_bytes : DefaultRecord(context, stripe);
  SequentialFile file;
  file.name = FileNameOf(settings, "iozonew");
  ProgressReporter reporter("iozonew");
  reporter.Start(IozoneDetails(file.name, settings.size_bytes, record, settings.seconds));
  if (!OpenForWriting(context, settings, stripe, &reporter, &file)) return reporter.Finish(false, {});
  double half = settings.seconds / 2;
  bool completed = RunHalf(context, file.file, "write", PassKind::kWriteNew, file.size, record, half, &reporter) &&
                   RunHalf(context, file.file, "rewrite", PassKind::kWrite, file.size, record, half, &reporter);
  return FinishSequential(context, settings, file, true, completed, &reporter);
}

int RunIozoneRead(const WorkloadContext& context, const WorkloadSettings& settings) {
  uint32_t stripe = StripeSizeOf(context, settings);
  uint64_t record = settings.record_bytes != 0 ? settings.record_bytes : DefaultRecord(context, stripe);
  SequentialFile file;
  file.name = FileNameOf(settings, "iozoner");
  ProgressReporter reporter("iozoner");
  reporter.Start(IozoneDetails(file.name, settings.size_bytes, record, settings.seconds));
  auto prepare = [&](const SequentialFile& created) {
    return RunHalf(context, created.file, "prepare", PassKind::kWrite, created.size, record, 0, &reporter);
  };
  bool interrupted = false;
  if (!OpenForReading(context, settings, stripe, prepare, &reporter, &file, &interrupted)) {
    return reporter.Finish(interrupted, {});
  }
  double half = settings.seconds / 2;
  bool completed = RunHalf(context, file.file, "read", PassKind::kRead, file.size, record, half, &reporter) &&
                   RunHalf(context, file.file, "reread", PassKind::kRead, file.size, record, half, &reporter);
  return FinishSequential(context, settings, file, file.created, completed, &reporter);
}

}  // namespace limpwatch::testbed::client
