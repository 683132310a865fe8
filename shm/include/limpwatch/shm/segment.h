// Creating, attaching, validating and listing limpwatch segments.
//
// The traced process creates its segment with SegmentWriter (one per process,
// mode 0600) and keeps raw pointers into it through SegmentView. Readers open
// a segment with SegmentReader, which validates every header field and region
// before handing out a SegmentView; nothing in a segment is trusted before that.
#ifndef LIMPWATCH_SHM_SEGMENT_H_
#define LIMPWATCH_SHM_SEGMENT_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/shm/layout.h"

namespace limpwatch::shm {

// ---- Names ----------------------------------------------------------------

inline constexpr std::string_view kObjectPrefix = "limpwatch.";

// True when `name` may be used as LIMPWATCH_NAME: 1-63 characters of
// [A-Za-z0-9_.-], not all digits (it would read as a pid), not starting or
// ending with a dot.
bool IsValidSegmentName(std::string_view name);

// "limpwatch.<pid>" or "limpwatch.<name>.<pid>".
std::string SegmentObjectName(std::string_view name, pid_t pid);

struct ObjectNameParts {
  std::string name;  // empty when the segment is named after the pid only
  pid_t pid = 0;
};
std::optional<ObjectNameParts> ParseSegmentObjectName(std::string_view object_name);

// ---- Raw access -----------------------------------------------------------

// Typed pointers into a mapped segment whose header has been validated (or
// that this process created). Cheap to copy; does not own the mapping.
class SegmentView {
 public:
  SegmentView() = default;
  explicit SegmentView(void* base);

  bool valid() const { return base_ != nullptr; }
  uint8_t* base() const { return base_; }
  SegmentHeader* header() const { return reinterpret_cast<SegmentHeader*>(base_); }
  FunctionIndexEntry* function_index() const { return function_index_; }
  SymbolEntry* symbols() const { return symbols_; }
  ThreadSlotHeader* slot(uint32_t index) const;
  IoBlock* io(uint32_t slot_index) const;
  StackFrame* frames(uint32_t slot_index) const;
  FunctionCounters* counters(uint32_t slot_index) const;
  RetiredTotalsHeader* retired() const { return retired_; }
  FunctionCounters* retired_counters() const { return retired_counters_; }
  NodeMetricsRecord* node_metrics() const { return node_metrics_; }
  AlarmRingHeader* alarm_ring() const { return alarm_ring_; }
  AlarmRecord* alarm(uint64_t sequence) const;  // the ring position of a 1-based sequence
  PeerStatusBlock* peer_status() const { return reinterpret_cast<PeerStatusBlock*>(base_ + kPeerStatusOffset); }
  ScoreStatusBlock* score_status() const { return reinterpret_cast<ScoreStatusBlock*>(base_ + kScoreStatusOffset); }
  AnalyzerHealth* analyzer_health() const { return reinterpret_cast<AnalyzerHealth*>(base_ + kAnalyzerHealthOffset); }
  AnalyzerShedding* analyzer_shedding() const {
    return reinterpret_cast<AnalyzerShedding*>(base_ + kAnalyzerSheddingOffset);
  }
  SampleTableHeader* sample_table() const { return sample_table_; }
  SampledFunction* sampled_functions() const { return sampled_functions_; }
  uint32_t sample_capacity() const { return sample_capacity_; }
  // Request flows; has_flows() false for a segment without the region.
  bool has_flows() const { return flows_ != nullptr; }
  FlowRegionDescriptor* flow_descriptor() const {
    return reinterpret_cast<FlowRegionDescriptor*>(base_ + kFlowRegionOffset);
  }
  FlowRingHeader* flow_ring(uint32_t slot_index) const;
  FlowEvent* flow_events(uint32_t slot_index) const;
  uint32_t flow_events_per_thread() const { return flow_events_per_thread_; }
  uint32_t max_flow_events() const { return max_flow_events_; }

 private:
  uint8_t* base_ = nullptr;
  FunctionIndexEntry* function_index_ = nullptr;
  SymbolEntry* symbols_ = nullptr;
  uint8_t* threads_ = nullptr;
  uint64_t slot_size_ = 0;
  uint32_t stack_depth_ = 0;
  RetiredTotalsHeader* retired_ = nullptr;
  FunctionCounters* retired_counters_ = nullptr;
  NodeMetricsRecord* node_metrics_ = nullptr;
  AlarmRingHeader* alarm_ring_ = nullptr;
  AlarmRecord* alarms_ = nullptr;
  uint32_t alarm_capacity_ = 0;
  SampleTableHeader* sample_table_ = nullptr;
  SampledFunction* sampled_functions_ = nullptr;
  uint32_t sample_capacity_ = 0;
  uint8_t* flows_ = nullptr;
  uint32_t flow_events_per_thread_ = 0;
  uint32_t max_flow_events_ = 0;
  uint64_t flow_ring_size_ = 0;
};

// Checks a mapped segment of `mapped_size_untrusted` bytes: magic, version,
// endianness, struct sizes, geometry bounds and every region against the
// layout recomputed from the geometry. Returns an empty string when valid,
// else a one-line reason ("bad magic", "version 2.0, this reader reads 1.x", ...).
std::string ValidateSegment(const void* base, uint64_t mapped_size_untrusted);

// ---- Owner identity and liveness -------------------------------------------

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or 0.
uint64_t ProcessStartTime(pid_t pid);

// Numeric field `field` of a /proc/<pid>/stat line, numbered as proc(5)
// does (from 4 on: field 3 is the state letter), or nullopt. The command
// name (field 2) may hold spaces and parentheses: fields are counted from
// its last ')'.
std::optional<uint64_t> ProcStatField(std::string_view line, int field);

// The state letter (field 3) of a /proc/<pid>/stat line, or nullopt.
std::optional<char> ProcStatState(std::string_view line);

// Whether process `pid` runs, not as a zombie, and (unless 0) started at
// `expected_start_time` (a pid reused by another process is not its owner).
bool OwnerAlive(pid_t pid, uint64_t expected_start_time);

enum class Liveness {
  kLive,      // the owner runs
  kExited,    // the owner exited normally and kept the segment
  kStale,     // the owner died without cleaning up (or its pid now belongs to another process)
  kCreating,  // the owner is still initialising the header (or died doing it)
};
Liveness SegmentLiveness(const SegmentHeader& header);
const char* LivenessName(Liveness liveness);

// ---- The writer (the traced process) ---------------------------------------

struct OwnerInfo {
  std::string name;     // LIMPWATCH_NAME or empty
  std::string program;  // basename of the executable
  pid_t pid = 0;
  pid_t parent_pid = 0;
  ClockSource clock_source = ClockSource::kMonotonicRaw;
  double ns_per_tick = 1.0;
  uint64_t clock_ref_ticks = 0;
  uint64_t clock_ref_realtime_ns = 0;
};

class SegmentWriter {
 public:
  // Creates the object (failing if it exists), sizes it, maps it and writes
  // the header; the segment is published (owner_state = kRunning) last.
  // Returns null and sets *error on failure.
  static std::unique_ptr<SegmentWriter> Create(const std::string& object_name, const Geometry& geometry,
                                               const OwnerInfo& owner, std::string* error);
  ~SegmentWriter();  // unmaps; does not remove the object
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  const SegmentView& view() const { return view_; }
  const std::string& object_name() const { return object_name_; }
  uint64_t size() const { return size_; }

  // Removes the shared-memory object name; the mapping stays valid.
  void Remove();

  // After Remove: publishes the segment again under its name, as a new
  // object holding a copy of the mapping's bytes, mapped in the old one's
  // place (every pointer into it stays valid). Writes made by other threads
  // while it copies may be lost. False with *error when it cannot.
  bool Republish(std::string* error);

 private:
  SegmentWriter() = default;
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  SegmentView view_;
  std::string object_name_;
  uint64_t size_ = 0;
};

// ---- The reader ------------------------------------------------------------

class SegmentReader {
 public:
  // Opens an existing segment read-only and validates it. Returns null and
  // sets a one-line *error ("segment 'x': truncated: ...") on failure.
  static std::unique_ptr<SegmentReader> Open(const std::string& object_name, std::string* error);
  ~SegmentReader();
  SegmentReader(const SegmentReader&) = delete;
  SegmentReader& operator=(const SegmentReader&) = delete;

  const SegmentView& view() const { return view_; }
  const SegmentHeader& header() const { return *view_.header(); }
  const std::string& object_name() const { return object_name_; }
  uint64_t size() const { return size_; }

 private:
  SegmentReader() = default;
  struct Mapping;
  std::unique_ptr<Mapping> mapping_;
  SegmentView view_;
  std::string object_name_;
  uint64_t size_ = 0;
};

// ---- Listing -----------------------------------------------------------------

struct SegmentListing {
  std::string object_name;
  ObjectNameParts parts;
  uint64_t size = 0;
  std::string error;               // non-empty when the segment could not be validated
  Liveness liveness = Liveness::kStale;
  std::string program;
  uint64_t created_realtime_ns = 0;
};

// Every object named limpwatch.* in the shared-memory file system, validated.
std::vector<SegmentListing> ListSegments();

// Resolves what a user typed (an object name, a pid, or a LIMPWATCH_NAME) to
// one object name. A name matching several segments prefers the one live
// segment; several live ones are an error listing their pids.
std::optional<std::string> ResolveSegment(std::string_view what, std::string* error);

// Removes an object by name; returns false and sets *error on failure.
bool RemoveSegmentObject(const std::string& object_name, std::string* error);

// Whether a listed segment may still be removed, judged again now: a
// listing is a moment old, and a segment that came back to life meanwhile
// (a new owner under the same object name) must survive. Stale segments
// may go, exited ones when `include_exited`; one that cannot be validated
// only when no process has its pid.
bool StillRemovable(const SegmentListing& listing, bool include_exited);

}  // namespace limpwatch::shm

#endif  // LIMPWATCH_SHM_SEGMENT_H_
