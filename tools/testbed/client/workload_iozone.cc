// iozonew and iozoner (seed 000 section 4.1): IOzone in write/rewrite and
// read/reread mode. Large records, an fsync after each write phase, and the
// workload changes half-way (write -> rewrite, read -> reread). With
// --seconds, each half runs for half the time.
#include <cerrno>

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
  if (kind == PassKind::kWrite && !context.interrupted->load()) {
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
  std::string name = FileNameOf(settings, "iozonew");
  ProgressReporter reporter("iozonew");
  reporter.Start(IozoneDetails(name, settings.size_bytes, record, settings.seconds));
  OpenFile file;
  int error = context.fs->Open(name, &file);
  if (error == ENOENT) error = context.fs->Create(name, stripe, {}, &file);
  if (error != 0) {
    reporter.AddError("create", error);
    return reporter.Finish(false, {});
  }
  double half = settings.seconds / 2;
  bool completed = RunHalf(context, file, "write", PassKind::kWrite, settings.size_bytes, record, half, &reporter) &&
                   RunHalf(context, file, "rewrite", PassKind::kWrite, settings.size_bytes, record, half, &reporter);
  context.fs->StopWatchingInterruption();
  if (!settings.keep && (error = context.fs->Remove(name)) != 0) reporter.AddError("remove", error);
  return reporter.Finish(!completed, {});
}

int RunIozoneRead(const WorkloadContext& context, const WorkloadSettings& settings) {
  uint32_t stripe = StripeSizeOf(context, settings);
  uint64_t record = settings.record_bytes != 0 ? settings.record_bytes : DefaultRecord(context, stripe);
  std::string name = FileNameOf(settings, "iozoner");
  ProgressReporter reporter("iozoner");
  reporter.Start(IozoneDetails(name, settings.size_bytes, record, settings.seconds));
  OpenFile file;
  bool created = false;
  uint64_t size = settings.size_bytes;
  int error = context.fs->Open(name, &file);
  if (error == 0) {
    error = context.fs->Size(file, &size);
  } else if (error == ENOENT) {
    error = context.fs->Create(name, stripe, {}, &file);
    created = error == 0;
    if (created && !RunHalf(context, file, "prepare", PassKind::kWrite, size, record, 0, &reporter)) {
      context.fs->StopWatchingInterruption();
      context.fs->Remove(name);
      return reporter.Finish(true, {});
    }
  }
  if (error != 0) {
    reporter.AddError("open", error);
    return reporter.Finish(false, {});
  }
  double half = settings.seconds / 2;
  bool completed = RunHalf(context, file, "read", PassKind::kRead, size, record, half, &reporter) &&
                   RunHalf(context, file, "reread", PassKind::kRead, size, record, half, &reporter);
  context.fs->StopWatchingInterruption();
  if (created && !settings.keep && (error = context.fs->Remove(name)) != 0) reporter.AddError("remove", error);
  return reporter.Finish(!completed, {});
}

}  // namespace limpwatch::testbed::client
