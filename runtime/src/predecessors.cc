#include "predecessors.h"

#include <unistd.h>

#include <atomic>

#include "limpwatch/shm/segment.h"
#include "process.h"
#include "service_tasks.h"

namespace limpwatch::runtime {
namespace {

// On the service thread's first pass, not in the constructor that creates
// the segment: listing validates every segment on the node, which the
// program's start must not wait for. It runs once; the period only keeps
// the task's entry quiet afterwards.
constexpr uint32_t kPeriodMs = 3'600'000;

constinit std::atomic<bool> g_done{false};
constinit char g_name[shm::kNameSize] = {};

std::string PidList(const std::vector<pid_t>& pids) {
  std::string text;
  for (pid_t pid : pids) text += (text.empty() ? "" : ", ") + std::to_string(pid);
  return text;
}

void RemoveOnce(const shm::SegmentView&, uint64_t) {
  if (g_done.exchange(true, std::memory_order_acq_rel)) return;
  RemovedPredecessors removed = RemoveDeadPredecessors(g_name, getpid());
  for (const std::string& error : removed.errors) LogLine(error);
  if (!removed.pids.empty()) {
    LogLine("removed the segments of " + std::to_string(removed.pids.size()) + " dead predecessor" +
            (removed.pids.size() == 1 ? "" : "s") + " named '" + g_name + "' (pid " + PidList(removed.pids) + ")");
  }
}

}  // namespace

RemovedPredecessors RemoveDeadPredecessors(const std::string& name, pid_t own_pid) {
  RemovedPredecessors removed;
  if (name.empty()) return removed;
  for (const shm::SegmentListing& listing : shm::ListSegments()) {
    if (listing.parts.name != name || listing.parts.pid == own_pid) continue;
    if (listing.liveness != shm::Liveness::kStale || !shm::StillRemovable(listing, false)) continue;
    std::string error;
    if (shm::RemoveSegmentObject(listing.object_name, &error)) {
      removed.pids.push_back(listing.parts.pid);
    } else {
      removed.errors.push_back(error);
    }
  }
  return removed;
}

void RemoveDeadPredecessorsSoon(const std::string& name) {
  if (name.empty() || name.size() >= sizeof g_name) return;
  name.copy(g_name, sizeof g_name - 1);
  RegisterServiceTask("predecessors", RemoveOnce, kPeriodMs);
}

}  // namespace limpwatch::runtime
