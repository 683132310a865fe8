// ddw and ddr (seed 000 section 4.1): dd writing zeros to a client-specific
// file, or reading a previously written file to /dev/null, in large records
// (one stripe unit per server per record), at a constant pace. Each ddw pass
// truncates the file first, as dd's O_TRUNC does.
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
  SequentialFile file;
  file.name = FileNameOf(settings, "ddw");
  ProgressReporter reporter("ddw");
  reporter.Start(SequentialDetails(context, file.name, settings.size_bytes, record, stripe, settings.seconds));
  if (!OpenForWriting(context, settings, stripe, &reporter, &file)) return reporter.Finish(false, {});
  reporter.SetPhase("write");
  bool completed =
      RunTimedPasses(context, file.file, PassKind::kWriteNew, file.size, record, settings.seconds, &reporter);
  return FinishSequential(context, settings, file, true, completed, &reporter);
}

int RunDdr(const WorkloadContext& context, const WorkloadSettings& settings) {
  uint32_t stripe = StripeSizeOf(context, settings);
  uint64_t record = settings.record_bytes != 0 ? settings.record_bytes : DefaultRecord(context, stripe);
  SequentialFile file;
  file.name = FileNameOf(settings, "ddr");
  ProgressReporter reporter("ddr");
  reporter.Start(SequentialDetails(context, file.name, settings.size_bytes, record, stripe, settings.seconds));
  // ddr reads a previously written file: a missing one is written first.
  auto prepare = [&](const SequentialFile& created) {
    reporter.SetPhase("prepare");
    return RunTimedPasses(context, created.file, PassKind::kWrite, created.size, record, 0, &reporter);
  };
  bool interrupted = false;
  if (!OpenForReading(context, settings, stripe, prepare, &reporter, &file, &interrupted)) {
    return reporter.Finish(interrupted, {});
  }
  reporter.SetPhase("read");
  bool completed = RunTimedPasses(context, file.file, PassKind::kRead, file.size, record, settings.seconds, &reporter);
  return FinishSequential(context, settings, file, file.created, completed, &reporter);
}

}  // namespace limpwatch::testbed::client
