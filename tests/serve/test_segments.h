// Real segments for the serve tests, made with SegmentWriter and filled
// through the segment view as the runtime and the analyzer fill them.
// Names carry the test's pid; every segment is removed when the owner goes.
#ifndef LIMPWATCH_TESTS_SERVE_TEST_SEGMENTS_H_
#define LIMPWATCH_TESTS_SERVE_TEST_SEGMENTS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::testing {

shm::Geometry SmallGeometry();

class TestSegments {
 public:
  TestSegments() = default;
  ~TestSegments();
  TestSegments(const TestSegments&) = delete;
  TestSegments& operator=(const TestSegments&) = delete;

  // "lwserve-<tag>-<pid>": the segment's LIMPWATCH_NAME, and its `server` label.
  static std::string Name(std::string_view tag);

  // A live segment named after `tag`, of this process unless `owner` names
  // another live one; null (and a test failure) if it cannot be made.
  const shm::SegmentView* Create(std::string_view tag, const shm::Geometry& geometry = SmallGeometry(),
                                 pid_t owner = 0);
  // The object name of the segment made for `tag` (and `owner`).
  static std::string Object(std::string_view tag, pid_t owner = 0);

 private:
  std::vector<std::unique_ptr<shm::SegmentWriter>> writers_;
  std::vector<std::string> objects_;
};

void RegisterFunction(const shm::SegmentView& view, uint32_t id, std::string_view name, uint64_t name_hash);
void ActivateSlot(const shm::SegmentView& view, uint32_t slot, uint32_t tid);
void AddCounts(const shm::SegmentView& view, uint32_t slot, uint32_t function, uint64_t calls, uint64_t self_ticks);
void AddIo(const shm::SegmentView& view, uint32_t slot, shm::FdKind kind, shm::IoOperation operation, uint64_t calls,
           uint64_t bytes, uint64_t ticks, uint64_t errors);
void AddErrno(const shm::SegmentView& view, uint32_t slot, uint32_t errno_slot, shm::FdKind kind,
              shm::IoOperation operation, int error, uint64_t count);
// The peer block as the analyzer publishes it (under its sequence lock).
void PublishPeers(const shm::SegmentView& view, uint64_t received, uint64_t accepted, uint64_t rejected,
                  const std::vector<std::pair<std::string, uint64_t>>& accepted_by_peer, uint64_t now_unix_ms);
// The analyzer's scores of the window, through its own PublishScoreStatus:
// only those of `server` (the segment's own) are kept.
void PublishScores(const shm::SegmentView& view, const std::string& server, const analyzer::WindowResult& window,
                   uint64_t now_unix_ms);
// An alarm in the ring, through the analyzer's own PublishAlarm, held by
// `agreeing` of `analyzers` (0 of 0: agreement not recorded); returns its sequence.
uint64_t RaiseAlarm(const shm::SegmentView& view, analyzer::AlarmKind kind, const std::string& server,
                    shm::Resource resource, double score, double threshold, uint64_t time_unix_ms,
                    uint32_t agreeing = 0, uint32_t analyzers = 0);

uint64_t UnixNowMs();

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SERVE_TEST_SEGMENTS_H_
