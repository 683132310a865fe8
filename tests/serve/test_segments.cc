#include "serve/test_segments.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "limpwatch/analyzer/score_status.h"
#include "limpwatch/shm/snapshot.h"
#include "support/resolved_symbol.h"

namespace limpwatch::testing {

shm::Geometry SmallGeometry() {
  shm::Geometry geometry;
  geometry.max_functions = 64;
  geometry.max_threads = 4;
  geometry.stack_depth = 16;
  geometry.alarm_capacity = 16;
  geometry.sample_capacity = 16;
  return geometry;
}

TestSegments::~TestSegments() {
  writers_.clear();
  for (const auto& object : objects_) shm_unlink(("/" + object).c_str());
}

std::string TestSegments::Name(std::string_view tag) {
  return "lwserve-" + std::string(tag) + "-" + std::to_string(getpid());
}

std::string TestSegments::Object(std::string_view tag, pid_t owner) {
  return shm::SegmentObjectName(Name(tag), owner != 0 ? owner : getpid());
}

const shm::SegmentView* TestSegments::Create(std::string_view tag, const shm::Geometry& geometry, pid_t owner_pid) {
  shm::OwnerInfo owner;
  owner.name = Name(tag);
  owner.program = "serve_test";
  owner.pid = owner_pid != 0 ? owner_pid : getpid();
  owner.parent_pid = getppid();
  owner.clock_source = shm::ClockSource::kMonotonicRaw;
  owner.ns_per_tick = 1.0;
  std::string object = Object(tag, owner.pid);
  objects_.push_back(object);  // before Create: removed even if the test fails right after
  std::string error;
  auto writer = shm::SegmentWriter::Create(object, geometry, owner, &error);
  EXPECT_NE(writer, nullptr) << error;
  if (writer == nullptr) return nullptr;
  writers_.push_back(std::move(writer));
  return &writers_.back()->view();
}

void RegisterFunction(const shm::SegmentView& view, uint32_t id, std::string_view name, uint64_t name_hash) {
  WriteResolvedSymbol(view, id, name, 0x400000 + uint64_t{id} * 16, name_hash);
}

void ActivateSlot(const shm::SegmentView& view, uint32_t slot, uint32_t tid) {
  view.slot(slot)->tid.store(tid);
  view.slot(slot)->generation.store(1);
  view.slot(slot)->state.store(static_cast<uint32_t>(shm::SlotState::kActive), std::memory_order_release);
}

void AddCounts(const shm::SegmentView& view, uint32_t slot, uint32_t function, uint64_t calls, uint64_t self_ticks) {
  shm::FunctionCounters& counters = view.counters(slot)[function];
  counters.calls.fetch_add(calls);
  counters.self_ticks.fetch_add(self_ticks);
  counters.total_ticks.fetch_add(self_ticks);
}

void AddIo(const shm::SegmentView& view, uint32_t slot, shm::FdKind kind, shm::IoOperation operation, uint64_t calls,
           uint64_t bytes, uint64_t ticks, uint64_t errors) {
  shm::IoCounters& counters = view.io(slot)->counters[uint32_t(kind)][uint32_t(operation)];
  counters.calls.fetch_add(calls);
  counters.bytes.fetch_add(bytes);
  counters.ticks.fetch_add(ticks);
  counters.errors.fetch_add(errors);
}

void AddErrno(const shm::SegmentView& view, uint32_t slot, uint32_t errno_slot, shm::FdKind kind,
              shm::IoOperation operation, int error, uint64_t count) {
  shm::ErrnoCount& entry = view.io(slot)->errnos[errno_slot];
  entry.key.store((uint32_t(error) << 16 | uint32_t(kind) << 8 | uint32_t(operation)) + 1);
  entry.count.fetch_add(count);
}

void PublishPeers(const shm::SegmentView& view, uint64_t received, uint64_t accepted, uint64_t rejected,
                  const std::vector<std::pair<std::string, uint64_t>>& accepted_by_peer, uint64_t now_unix_ms) {
  shm::PeerStatusBlock& block = *view.peer_status();
  uint64_t sequence = block.sequence.load();
  block.sequence.store(sequence + 1, std::memory_order_release);  // odd: being written
  block.updated_unix_ms.store(now_unix_ms);
  block.peers_configured.store(static_cast<uint32_t>(accepted_by_peer.size()));
  block.peers_listed.store(static_cast<uint32_t>(accepted_by_peer.size()));
  block.datagrams_received.store(received);
  block.datagrams_accepted.store(accepted);
  block.datagrams_rejected.store(rejected);
  for (size_t index = 0; index < accepted_by_peer.size(); ++index) {
    shm::PeerStatusEntry& entry = block.entries[index];
    shm::StoreNameWords(accepted_by_peer[index].first, entry.name, std::size(entry.name));
    entry.accepted.store(accepted_by_peer[index].second);
    entry.heard.store(accepted_by_peer[index].second > 0 ? 1 : 0);
    entry.last_heard_unix_ms.store(accepted_by_peer[index].second > 0 ? now_unix_ms : 0);
  }
  block.sequence.store(sequence + 2, std::memory_order_release);
}

void PublishScores(const shm::SegmentView& view, const std::string& server, const analyzer::WindowResult& window,
                   uint64_t now_unix_ms) {
  analyzer::PublishScoreStatus(view, window, server, now_unix_ms);
}

uint64_t RaiseAlarm(const shm::SegmentView& view, analyzer::AlarmKind kind, const std::string& server,
                    shm::Resource resource, double score, double threshold, uint64_t time_unix_ms,
                    uint32_t agreeing, uint32_t analyzers) {
  analyzer::Alarm alarm;
  alarm.kind = kind;
  alarm.server = server;
  alarm.resource = resource;
  alarm.score = score;
  alarm.threshold = threshold;
  alarm.time_unix_ms = time_unix_ms;
  alarm.metrics = kind == analyzer::AlarmKind::kSilent   ? std::vector<std::string>{"silence"}
                  : kind == analyzer::AlarmKind::kErrors ? std::vector<std::string>{"errors"}
                                                         : std::vector<std::string>{"dwrite", "dread"};
  for (uint32_t i = 0; i < agreeing; ++i) alarm.agreeing.push_back("analyzer" + std::to_string(i));
  alarm.analyzers = analyzers;
  return analyzer::PublishAlarm(view, alarm);
}

uint64_t UnixNowMs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
}

}  // namespace limpwatch::testing
