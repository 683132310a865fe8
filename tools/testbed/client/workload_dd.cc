// ddw and ddr (seed 000 section 4.1): dd writing zeros to a client-specific
// file, or reading a previously written file to /dev/null, in large records
// (one stripe unit per server per record), at a constant pace.
#include <cerrno>

#include "client/progress_reporter.h"
#include "client/sequential_pass.h"
#include "client/workloads.h"

namespace limpwatch::testbed::client {
namespace {

JsonLine SequentialDetails(const WorkloadContext& context, const std::string& name, uint64_t size, uint64_t record,
                           uint32_t stripe, double seconds) {
  return JsonLine()
      .Add("file", name)
      .Add("size_bytes", size)
      .Add("record_bytes", record)
      .Add("stripe_bytes", uint64_t{stripe})
      .Add("servers", static_cast<uint64_t>(context.fs->server_count()))
      .Add("seconds", seconds);
}

}  // namespace

int RunDdw(const WorkloadContext& context, const WorkloadSettings& settings) {
  uint32_t stripe = StripeSizeOf(context, settings);
  uint64_t record = settings.record_bytes != 0 ? settings.record_bytes : DefaultRecord(context, stripe);
  std::string name = FileNameOf(settings, "ddw");
  ProgressReporter reporter("ddw");
  reporter.Start(SequentialDetails(context, name, settings.size_bytes, record, stripe, settings.seconds));
  OpenFile file;
  int error = context.fs->Open(name, &file);
  if (error == ENOENT) error = context.fs->Create(name, stripe, {}, &file);
  if (error != 0) {
    reporter.AddError("create", error);
    return reporter.Finish(false, {});
  }
  reporter.SetPhase("write");
  bool completed =
      RunTimedPasses(context, file, PassKind::kWrite, settings.size_bytes, record, settings.seconds, &reporter);
  context.fs->StopWatchingInterruption();
  if (!settings.keep && (error = context.fs->Remove(name)) != 0) reporter.AddError("remove", error);
  return reporter.Finish(!completed, {});
}

int RunDdr(const WorkloadContext& context, const WorkloadSettings& settings) {
  uint32_t stripe = StripeSizeOf(context, settings);
  uint64_t record = settings.record_bytes != 0 ? settings.record_bytes : DefaultRecord(context, stripe);
  std::string name = FileNameOf(settings, "ddr");
  ProgressReporter reporter("ddr");
  reporter.Start(SequentialDetails(context, name, settings.size_bytes, record, stripe, settings.seconds));
  OpenFile file;
  bool created = false;
  int error = context.fs->Open(name, &file);
  uint64_t size = settings.size_bytes;
  if (error == 0) {
    error = context.fs->Size(file, &size);
  } else if (error == ENOENT) {
    // ddr reads a previously written file: write it first, outside the measured phase.
    error = context.fs->Create(name, stripe, {}, &file);
    created = error == 0;
    if (created) {
      reporter.SetPhase("prepare");
      if (!RunTimedPasses(context, file, PassKind::kWrite, size, record, 0, &reporter)) {
        context.fs->StopWatchingInterruption();
        context.fs->Remove(name);
        return reporter.Finish(true, {});
      }
    }
  }
  if (error != 0) {
    reporter.AddError("open", error);
    return reporter.Finish(false, {});
  }
  reporter.SetPhase("read");
  bool completed = RunTimedPasses(context, file, PassKind::kRead, size, record, settings.seconds, &reporter);
  context.fs->StopWatchingInterruption();
  if (created && !settings.keep && (error = context.fs->Remove(name)) != 0) reporter.AddError("remove", error);
  return reporter.Finish(!completed, {});
}

}  // namespace limpwatch::testbed::client
