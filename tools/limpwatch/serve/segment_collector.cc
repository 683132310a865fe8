#include "serve/segment_collector.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>

namespace limpwatch::cli::serve {
namespace {

uint64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

// The owner of a shared-memory object, or nullopt when it cannot be opened.
std::optional<uid_t> ObjectOwner(const std::string& object_name) {
  int fd = shm_open(("/" + object_name).c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  struct stat status{};
  std::optional<uid_t> owner;
  if (fstat(fd, &status) == 0) owner = status.st_uid;
  close(fd);
  return owner;
}

}  // namespace

std::string ServerLabel(const std::string& name, const std::string& program, uint32_t pid) {
  if (!name.empty()) return name;
  return (program.empty() ? std::string("pid") : program) + "." + std::to_string(pid);
}

Collection SegmentCollector::Collect() {
  Collection collection;
  std::set<std::string> listed;
  uid_t me = geteuid();
  for (const shm::SegmentListing& listing : shm::ListSegments()) {
    if (!listing.error.empty() || listing.liveness != shm::Liveness::kLive) {
      ++collection.census.not_live;
      continue;
    }
    std::optional<uid_t> owner = ObjectOwner(listing.object_name);
    if (!owner) {
      ++collection.census.unreadable;
      continue;
    }
    if (*owner != me && !all_users_) {
      ++collection.census.other_user;
      continue;
    }
    Tracked& tracked = tracked_[listing.object_name];
    // The same object name again after its owner's pid came back: a new
    // segment, whose alarms start from nothing.
    if (tracked.reader && tracked.reader->header().created_realtime_ns != listing.created_realtime_ns) {
      tracked = Tracked{};
    }
    if (!tracked.reader) {
      std::string error;
      tracked.reader = shm::SegmentReader::Open(listing.object_name, &error);
      if (!tracked.reader) {
        tracked_.erase(listing.object_name);
        ++collection.census.unreadable;
        continue;
      }
    }
    listed.insert(listing.object_name);
    auto taken = std::make_shared<shm::Snapshot>();
    shm::TakeSnapshot(*tracked.reader, taken.get());
    if (taken->consistent) tracked.last_consistent = taken;
    std::shared_ptr<const shm::Snapshot> snapshot =
        taken->consistent || !tracked.last_consistent ? taken : tracked.last_consistent;
    tracked.alarms.Update(tracked.reader->view());
    ServedSegment segment;
    segment.object_name = listing.object_name;
    segment.created_realtime_ns = tracked.reader->header().created_realtime_ns;
    segment.server = ServerLabel(snapshot->name, snapshot->program, snapshot->pid);
    segment.snapshot = std::move(snapshot);
    segment.snapshot_consistent = taken->consistent;
    segment.alarms = tracked.alarms;
    collection.segments.push_back(std::move(segment));
  }
  std::erase_if(tracked_, [&](const auto& entry) { return !listed.count(entry.first); });

  // Two live processes under one LIMPWATCH_NAME would otherwise share every
  // series: each is told apart by its pid.
  std::map<std::string, int> uses;
  for (const ServedSegment& segment : collection.segments) ++uses[segment.server];
  for (ServedSegment& segment : collection.segments) {
    if (uses[segment.server] > 1) segment.server += "." + std::to_string(segment.snapshot->pid);
  }
  std::sort(collection.segments.begin(), collection.segments.end(),
            [](const ServedSegment& a, const ServedSegment& b) { return a.server < b.server; });
  collection.census.served = collection.segments.size();
  collection.taken_realtime_ns = RealtimeNs();
  return collection;
}

}  // namespace limpwatch::cli::serve
