// Fuzz target for the segment validator and what reads a segment after it:
// the input is the byte image of a segment, mapped size and all, as
// `limpwatch dump`, `alarms`, `list` and the in-process analyzer would find
// it in /dev/shm (shm/segment.h, shm/snapshot.h, analyzer/alarm.h).
//
// Invariants, for every input:
//   - validation says why it refuses, in one line;
//   - a validated segment cut one byte short of its size is refused;
//   - a validated segment's snapshot is consistent (nothing writes it) and
//     holds no more functions, threads, open frames and peers than its
//     geometry and header page have room for, names within their fields
//     (the validated ones with their NUL);
//   - its alarm ring yields at most its capacity of alarms, in increasing
//     sequence, and nothing new when read again from the last sequence.
//
// The header's retiring_now flag is cleared before reading: it says a
// thread of the writer is retiring right now, and the snapshot then waits
// for it (up to 64 tries, half of them 1 ms apart) as it should for a live
// writer; an image that holds it would only make every input slow.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::shm::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

void Check(bool condition, const char* invariant) { Require(condition, "segment", invariant); }

void CheckSnapshot(const SegmentView& view) {
  const SegmentHeader& header = *view.header();
  Snapshot snapshot;
  TakeSnapshot(view, "limpwatch.fuzz.1", &snapshot);
  Check(snapshot.consistent, "a still segment gives a consistent snapshot");
  Check(snapshot.functions.size() <= header.max_functions, "no more functions than the table holds");
  for (const FunctionRecord& function : snapshot.functions) {
    Check(function.name.size() < kSymbolNameSize, "a function's name fits its field");
  }
  Check(snapshot.threads.size() <= header.max_threads, "no more threads than slots");
  for (const ThreadRecord& thread : snapshot.threads) {
    Check(thread.slot < header.max_threads, "a thread's slot exists");
    Check(thread.open_frames.size() <= header.stack_depth, "no more open frames than the stack holds");
  }
  Check(snapshot.name.size() < kNameSize && snapshot.program.size() < kNameSize, "names fit their fields");
  Check(snapshot.samples.functions.size() <= view.sample_capacity(), "no more sampled functions than entries");
  Check(snapshot.peer_status.peers.size() <= kPeerStatusEntries, "no more peers than the block lists");
  // Names the analyzer writes under a sequence lock are not validated at
  // open (they change while the segment is read): one without its NUL
  // reads as the whole field, and no more.
  for (const PeerStatusRow& peer : snapshot.peer_status.peers) {
    Check(peer.name.size() <= kNameSize, "a peer's name fits its field");
  }
  Check(snapshot.node_metrics.disk_name.size() <= sizeof(NodeMetricsRecord::disk_name), "the disk's name fits");
  PeerStatusValues peers = ReadPeerStatus(view);
  Check(peers.peers.size() == snapshot.peer_status.peers.size(), "the peer status alone reads the same peers");
}

void CheckAlarms(const SegmentView& view) {
  uint64_t last = 0;
  std::vector<analyzer::RingAlarm> alarms = analyzer::ReadAlarmRing(view, 0, &last);
  Check(alarms.size() <= view.header()->alarm_capacity, "no more alarms than the ring holds");
  for (size_t index = 0; index < alarms.size(); ++index) {
    Check(alarms[index].sequence <= last, "no alarm after the last sequence");
    Check(alarms[index].server.size() <= kNameSize && alarms[index].metrics.size() <= kNameSize,
          "an alarm's texts fit their fields");
    if (index > 0) Check(alarms[index - 1].sequence < alarms[index].sequence, "alarms in increasing sequence");
  }
  uint64_t again = 0;
  Check(analyzer::ReadAlarmRing(view, last, &again).empty(), "nothing new after the last sequence");
  Check(again == last, "and the same last sequence");
}

}  // namespace
}  // namespace limpwatch::shm::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::shm;
  using namespace limpwatch::shm::fuzzing;
  // Aligned as a mapping is, for the atomics the reader loads.
  static std::vector<uint64_t> image;
  image.assign((size + 7) / 8, 0);
  if (size > 0) std::memcpy(image.data(), data, size);
  void* base = image.data();

  std::string problem = ValidateSegment(base, size);
  if (!problem.empty()) {
    Check(problem.find('\n') == std::string::npos, "a refusal is one line");
    return 0;
  }
  const SegmentHeader& header = *static_cast<const SegmentHeader*>(base);
  Check(header.segment_size <= size, "a validated segment fits its mapping");
  Check(!ValidateSegment(base, header.segment_size - 1).empty(), "one byte short of its size, it is refused");

  static_cast<SegmentHeader*>(base)->retiring_now.store(0, std::memory_order_relaxed);
  SegmentView view(base);
  CheckSnapshot(view);
  CheckAlarms(view);
  return 0;
}
