// `limpwatch dump NAME`: everything one consistent snapshot holds.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "dump.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"
#include "output.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kDumpOptions[] = {
    {"--json", "", false},
    {"--help", "-h", false},
};

}  // namespace

double OpenFrameElapsedMs(const shm::Snapshot& snapshot, const shm::OpenFrame& frame) {
  if (frame.entry_ticks > snapshot.taken_ticks) return 0;
  return snapshot.TicksToNs(snapshot.taken_ticks - frame.entry_ticks) / 1e6;
}

std::string OpenFrameFunctionName(const shm::Snapshot& snapshot, const shm::OpenFrame& frame) {
  if (frame.function == shm::kNoFunction) return "(untracked)";
  if (frame.function >= snapshot.functions.size()) return "(function #" + std::to_string(frame.function) + ")";
  return snapshot.functions[frame.function].name;
}

double SegmentLifetimeSeconds(const DumpData& dump) {
  const shm::Snapshot& s = dump.snapshot;
  if (s.liveness != shm::Liveness::kLive || s.taken_realtime_ns <= dump.created_realtime_ns) return 0;
  return double(s.taken_realtime_ns - dump.created_realtime_ns) / 1e9;
}

double AverageSelfNs(const shm::Snapshot& snapshot, const shm::FunctionRecord& function) {
  if (function.counters.calls == 0) return 0;
  return snapshot.TicksToNs(function.counters.self_ticks) / double(function.counters.calls);
}

int RunDump(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kDumpOptions, &parsed, &error)) return UsageError("dump", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("dump"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("dump", "missing segment NAME");
  if (parsed.positional.size() > 1) return UsageError("dump", "unexpected argument '" + parsed.positional[1] + "'");

  std::optional<std::string> object = shm::ResolveSegment(parsed.positional[0], &error);
  if (!object) return Fail(kExitFailure, error);
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, &error);
  if (!reader) return Fail(kExitFailure, error);

  auto dump = std::make_unique<DumpData>();
  shm::TakeSnapshot(*reader, &dump->snapshot);
  dump->created_realtime_ns = reader->header().created_realtime_ns;
  dump->object_size = reader->size();
  WriteOut(parsed.Has("--json") ? RenderDumpJson(*dump) : RenderDumpText(*dump));
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
