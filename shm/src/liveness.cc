#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "limpwatch/shm/segment.h"

namespace limpwatch::shm {
namespace {

constexpr const char* kShmDirectory = "/dev/shm";

bool ProcessExists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::optional<char> ProcStatState(std::string_view line) {
  size_t close = line.rfind(')');
  if (close == std::string_view::npos || close + 2 >= line.size() || line[close + 1] != ' ') return std::nullopt;
  return line[close + 2];
}

// kill(pid, 0) also succeeds for a zombie: a server killed a moment ago that
// its parent has not reaped yet. Its segment is orphaned all the same.
bool OwnerAlive(pid_t pid, uint64_t expected_start_time) {
  if (pid <= 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return ProcessExists(pid);  // no /proc to read: existence is all we know
  std::optional<char> state = ProcStatState(line);
  if (state == 'Z' || state == 'X') return false;
  return expected_start_time == 0 || ProcStatField(line, 22) == expected_start_time;
}

std::optional<uint64_t> ProcStatField(std::string_view line, int field) {
  size_t close = line.rfind(')');
  if (close == std::string_view::npos || field < 3) return std::nullopt;
  std::string_view rest = line.substr(close + 1);
  for (int index = 3;; ++index) {
    size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) return std::nullopt;
    size_t end = std::min(rest.find_first_of(" \n", start), rest.size());
    if (index == field) {
      uint64_t value = 0;
      auto [stop, error] = std::from_chars(rest.data() + start, rest.data() + end, value);
      if (error != std::errc() || stop != rest.data() + end) return std::nullopt;
      return value;
    }
    rest.remove_prefix(end);
  }
}

uint64_t ProcessStartTime(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return 0;
  return ProcStatField(line, 22).value_or(0);
}

Liveness SegmentLiveness(const SegmentHeader& header) {
  uint32_t state = header.owner_state.load(std::memory_order_acquire);
  if (state == static_cast<uint32_t>(OwnerState::kExited)) return Liveness::kExited;
  pid_t pid = static_cast<pid_t>(header.owner_pid);
  bool alive = OwnerAlive(pid, header.owner_start_time);
  if (state == static_cast<uint32_t>(OwnerState::kCreating)) return alive ? Liveness::kCreating : Liveness::kStale;
  return alive ? Liveness::kLive : Liveness::kStale;
}

const char* LivenessName(Liveness liveness) {
  switch (liveness) {
    case Liveness::kLive: return "live";
    case Liveness::kExited: return "exited";
    case Liveness::kStale: return "stale";
    case Liveness::kCreating: return "creating";
  }
  return "?";
}

std::vector<SegmentListing> ListSegments() {
  std::vector<SegmentListing> listings;
  DIR* directory = opendir(kShmDirectory);
  if (directory == nullptr) return listings;
  while (dirent* entry = readdir(directory)) {
    auto parts = ParseSegmentObjectName(entry->d_name);
    if (!parts) continue;
    SegmentListing listing;
    listing.object_name = entry->d_name;
    listing.parts = *parts;
    std::string error;
    auto reader = SegmentReader::Open(listing.object_name, &error);
    if (!reader) {
      listing.error = error;
      // A segment that cannot be validated is stale when nobody owns its pid.
      listing.liveness = OwnerAlive(parts->pid, 0) ? Liveness::kCreating : Liveness::kStale;
    } else {
      listing.size = reader->size();
      listing.liveness = SegmentLiveness(reader->header());
      listing.program = reader->header().program;
      listing.created_realtime_ns = reader->header().created_realtime_ns;
    }
    listings.push_back(std::move(listing));
  }
  closedir(directory);
  std::sort(listings.begin(), listings.end(),
            [](const SegmentListing& a, const SegmentListing& b) { return a.object_name < b.object_name; });
  return listings;
}

bool StillRemovable(const SegmentListing& listing, bool include_exited) {
  std::string error;
  std::unique_ptr<SegmentReader> reader = SegmentReader::Open(listing.object_name, &error);
  if (!reader) return !listing.error.empty() && !OwnerAlive(listing.parts.pid, 0);
  Liveness liveness = SegmentLiveness(reader->header());
  return liveness == Liveness::kStale || (include_exited && liveness == Liveness::kExited);
}

std::optional<std::string> ResolveSegment(std::string_view what, std::string* error) {
  std::string wanted(what);
  if (ParseSegmentObjectName(wanted)) return wanted;
  std::vector<SegmentListing> matches;
  for (auto& listing : ListSegments()) {
    bool by_pid = std::to_string(listing.parts.pid) == wanted;
    bool by_name = !listing.parts.name.empty() && listing.parts.name == wanted;
    if (by_pid || by_name) matches.push_back(listing);
  }
  if (matches.empty()) {
    *error = "no limpwatch segment named '" + wanted + "' (see 'limpwatch list')";
    return std::nullopt;
  }
  if (matches.size() == 1) return matches.front().object_name;
  std::vector<const SegmentListing*> live;
  for (auto& match : matches) {
    if (match.liveness == Liveness::kLive) live.push_back(&match);
  }
  if (live.size() == 1) return live.front()->object_name;
  std::string candidates;
  for (auto& match : matches) candidates += " " + match.object_name + "(" + LivenessName(match.liveness) + ")";
  *error = "'" + wanted + "' matches several segments:" + candidates;
  return std::nullopt;
}

}  // namespace limpwatch::shm
