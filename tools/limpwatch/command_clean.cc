// `limpwatch clean`: removes segments nobody will write again.
#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "limpwatch/shm/segment.h"
#include "output.h"
#include "segment_state.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kCleanOptions[] = {
    {"--dry-run", "", false},
    {"--exited", "", false},
    {"--help", "-h", false},
};

// Why a segment may go, or empty when it must stay.
std::string RemovalReason(const shm::SegmentListing& listing, bool include_exited) {
  if (!listing.error.empty()) {
    // Unreadable: all we know is the pid in its name. While that pid runs the
    // object may be a segment being created, so it stays.
    return listing.liveness == shm::Liveness::kStale ? "invalid, owner pid gone" : "";
  }
  switch (listing.liveness) {
    case shm::Liveness::kStale: return "stale";
    case shm::Liveness::kExited: return include_exited ? "exited" : "";
    case shm::Liveness::kLive:
    case shm::Liveness::kCreating: return "";
  }
  return "";
}

bool Matches(const shm::SegmentListing& listing, const std::vector<std::string>& names) {
  if (names.empty()) return true;
  for (const auto& name : names) {
    if (name == listing.object_name || name == std::to_string(listing.parts.pid) ||
        (!listing.parts.name.empty() && name == listing.parts.name)) {
      return true;
    }
  }
  return false;
}

}  // namespace

int RunClean(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kCleanOptions, &parsed, &error)) return UsageError("clean", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("clean"));
    return FinishOutput(kExitOk);
  }
  bool dry_run = parsed.Has("--dry-run");
  bool include_exited = parsed.Has("--exited");

  int status = kExitOk;
  size_t removed = 0;
  for (const auto& listing : shm::ListSegments()) {
    if (!Matches(listing, parsed.positional)) continue;
    std::string reason = RemovalReason(listing, include_exited);
    if (reason.empty()) continue;
    if (dry_run) {
      WriteOut("would remove " + listing.object_name + " (" + reason + ")\n");
      ++removed;
      continue;
    }
    if (!shm::StillRemovable(listing, include_exited)) continue;
    if (!shm::RemoveSegmentObject(listing.object_name, &error)) {
      // One line per object that could not go; the others are still cleaned.
      status = Fail(kExitFailure, error);
      continue;
    }
    WriteOut("removed " + listing.object_name + " (" + reason + ")\n");
    ++removed;
  }
  std::string noun = removed == 1 ? " segment\n" : " segments\n";
  WriteOut((dry_run ? "would remove " : "removed ") + std::to_string(removed) + noun);
  return FinishOutput(status);
}

}  // namespace limpwatch::cli
