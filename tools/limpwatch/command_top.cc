// `limpwatch top NAME`: the most active functions, refreshed every delay.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "format.h"
#include "limpwatch/analyzer/interval.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"
#include "output.h"
#include "sample_profile.h"
#include "stop_signals.h"
#include "top_frame.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr double kMinDelaySeconds = 0.01;
constexpr double kMaxDelaySeconds = 86400;
// How often the owner's liveness is checked inside a long delay, so an exit
// ends `top -d 60` within a fraction of a second instead of a minute later.
constexpr double kLivenessPollSeconds = 0.25;
constexpr std::string_view kClearScreen = "\x1b[H\x1b[2J";

constexpr OptionSpec kTopOptions[] = {
    {"--delay", "-d", true},
    {"--iterations", "-n", true},
    {"--sort", "-s", true},
    {"--limit", "-l", true},
    {"--samples", "", false},
    {"--help", "-h", false},
};

struct TopSettings {
  std::string segment;
  double delay_seconds = 1.0;
  uint64_t iterations = 0;  // 0: until stopped
  bool samples = false;     // the CPU-sample profile instead of the call table
  TopFrameOptions frame;
};

// Returns 0 on success, else the exit status of the reported usage error.
int ParseSettings(const ParsedArgs& parsed, TopSettings* settings) {
  if (parsed.positional.empty()) return UsageError("top", "missing segment NAME");
  if (parsed.positional.size() > 1) return UsageError("top", "unexpected argument '" + parsed.positional[1] + "'");
  settings->segment = parsed.positional[0];
  if (const std::string* value = parsed.Value("--delay")) {
    if (!ParseSeconds(*value, &settings->delay_seconds) || settings->delay_seconds < kMinDelaySeconds ||
        settings->delay_seconds > kMaxDelaySeconds) {
      return UsageError("top", "bad delay '" + *value + "': expected seconds from 0.01 to 86400");
    }
  }
  if (const std::string* value = parsed.Value("--iterations")) {
    if (!ParseUnsigned(*value, &settings->iterations) || settings->iterations == 0) {
      return UsageError("top", "bad iteration count '" + *value + "': expected a whole number of at least 1");
    }
  }
  if (const std::string* value = parsed.Value("--sort")) {
    if (!ParseSortKey(*value, &settings->frame.sort)) {
      return UsageError("top", "bad sort key '" + *value + "': expected self, total or calls");
    }
  }
  if (const std::string* value = parsed.Value("--limit")) {
    uint64_t limit = 0;
    if (!ParseUnsigned(*value, &limit) || limit > 1000000) {
      return UsageError("top", "bad limit '" + *value + "': expected a whole number (0 for all)");
    }
    settings->frame.limit = static_cast<size_t>(limit);
  }
  settings->samples = parsed.Has("--samples");
  return kExitOk;
}

bool OwnerRuns(shm::Liveness liveness) {
  return liveness == shm::Liveness::kLive || liveness == shm::Liveness::kCreating;
}

// Sleeps one delay. Returns false when a stop signal arrived; sets
// *owner_gone (and returns early) when the owner stopped running meanwhile.
bool WaitOneDelay(StopSignals* stop, const shm::SegmentReader& reader, double seconds, bool* owner_gone) {
  double waited = 0;
  while (waited < seconds) {
    double slice = std::min(kLivenessPollSeconds, seconds - waited);
    if (stop->Sleep(slice)) return false;
    waited += slice;
    if (!OwnerRuns(shm::SegmentLiveness(reader.header()))) {
      *owner_gone = true;
      return true;
    }
  }
  return true;
}

void FitToTerminal(TopFrameOptions* frame) {
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0) {
    frame->max_lines = size.ws_row;
    frame->max_width = size.ws_col;
  }
}

// The sample profile of one interval, under the same first line as the call table.
std::string RenderSampleTopFrame(const shm::Snapshot& before, const shm::Snapshot& after,
                                 const analyzer::IntervalRecord& interval, const TopFrameOptions& options) {
  std::string out = "segment " + Printable(after.object_name) + "  program " + Printable(after.program) + "  pid " +
                    std::to_string(after.pid) + "  " + shm::LivenessName(after.liveness) + "  interval " +
                    FormatFixed(interval.seconds, 3) + " s\n";
  size_t limit = options.limit;
  if (options.max_lines != 0) {
    // Room for the header, settings and note lines, and both tables' titles.
    size_t budget = options.max_lines > 12 ? options.max_lines - 12 : 1;
    limit = limit == 0 ? budget : std::min(limit, budget);
  }
  return out + RenderSampleProfileText(BuildSampleProfile(before, after), limit);
}

std::string OwnerGoneLine(const shm::Snapshot& snapshot) {
  return "owner " + Printable(snapshot.program) + " (pid " + std::to_string(snapshot.pid) + ") of " +
         Printable(snapshot.object_name) + " is no longer running: segment " +
         shm::LivenessName(snapshot.liveness) + "\n";
}

}  // namespace

int RunTop(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kTopOptions, &parsed, &error)) return UsageError("top", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("top"));
    return FinishOutput(kExitOk);
  }
  TopSettings settings;
  if (int status = ParseSettings(parsed, &settings); status != kExitOk) return status;

  std::optional<std::string> object = shm::ResolveSegment(settings.segment, &error);
  if (!object) return Fail(kExitFailure, error);
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, &error);
  if (!reader) return Fail(kExitFailure, error);

  StopSignals stop;
  auto before = std::make_unique<shm::Snapshot>();
  shm::TakeSnapshot(*reader, before.get());
  if (!OwnerRuns(before->liveness)) {
    return Fail(kExitFailure, "segment '" + *object + "': owner pid " + std::to_string(before->pid) +
                                  " is not running (" + shm::LivenessName(before->liveness) +
                                  "); 'limpwatch dump " + settings.segment + "' shows its totals");
  }

  bool terminal = isatty(STDOUT_FILENO) == 1;
  auto after = std::make_unique<shm::Snapshot>();
  analyzer::NodeRateTracker node_rates;
  node_rates.Update(before->node_metrics);
  for (uint64_t frame = 0; settings.iterations == 0 || frame < settings.iterations; ++frame) {
    bool owner_gone = false;
    if (!WaitOneDelay(&stop, *reader, settings.delay_seconds, &owner_gone)) break;
    shm::TakeSnapshot(*reader, after.get());
    analyzer::IntervalRecord interval = analyzer::DiffSnapshots(*before, *after);

    TopFrameOptions frame_options = settings.frame;
    if (terminal) FitToTerminal(&frame_options);
    frame_options.node_rates = &node_rates.Update(after->node_metrics);
    std::string text = settings.samples ? RenderSampleTopFrame(*before, *after, interval, frame_options)
                                        : RenderTopFrame(*before, *after, interval, frame_options);
    if (terminal) {
      text.insert(0, kClearScreen);
    } else if (frame > 0) {
      // Frames one after the other, blank-line separated: greppable and diffable.
      text.insert(0, "\n");
    }
    owner_gone = owner_gone || !OwnerRuns(after->liveness);
    if (owner_gone) text += OwnerGoneLine(*after);
    if (!WriteOut(text) || !FlushOut() || owner_gone) break;
    std::swap(before, after);
  }
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
