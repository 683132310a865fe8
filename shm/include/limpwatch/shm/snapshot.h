// A consistent copy of a segment's counters, taken by a reader.
//
// "Consistent" means: every thread's counts are seen exactly once, either in
// its live slot or in the retired totals, never both and never neither (the
// snapshot retries while a thread retires), and every slot is read within one
// slot generation. Individual counters of a running thread may be one call
// apart from each other, as with any sampling of live counters.
#ifndef LIMPWATCH_SHM_SNAPSHOT_H_
#define LIMPWATCH_SHM_SNAPSHOT_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/shm/segment.h"

namespace limpwatch::shm {

struct CounterValues {
  uint64_t calls = 0;
  uint64_t self_ticks = 0;
  uint64_t total_ticks = 0;
};

struct DiagnosticValues {
  uint64_t overflowed_calls = 0;
  uint64_t unmatched_exits = 0;
  uint64_t resynced_frames = 0;
  uint64_t untracked_calls = 0;
};

struct IoValues {
  uint64_t calls = 0;
  uint64_t bytes = 0;
  uint64_t ticks = 0;
  uint64_t errors = 0;
};

struct ErrnoRecord {
  FdKind kind = FdKind::kOther;
  IoOperation operation = IoOperation::kOther;
  int error = 0;
  uint64_t count = 0;
};

// I/O totals of a set of threads, per fd kind and operation.
struct IoSnapshot {
  IoValues counters[kFdKindCount][kIoOperationCount];
  std::vector<ErrnoRecord> errnos;  // merged by (kind, operation, errno)
  uint64_t errno_overflow = 0;
  uint64_t untimed_calls = 0;
  IoValues socket_reads[kSocketRoleCount];  // socket reads again, by SocketRole (nsread, ncread)

  const IoValues& at(FdKind kind, IoOperation operation) const {
    return counters[static_cast<uint32_t>(kind)][static_cast<uint32_t>(operation)];
  }
};

struct SampledFunctionRecord {
  uint64_t name_hash = 0;
  std::string name;
  std::string image;
  ImageKind image_kind = ImageKind::kUnknown;
  uint64_t samples = 0;
  uint64_t kernel_samples = 0;
};

// A name kept as NUL-padded bytes in little-endian atomic words (read under
// a sequence lock while its writer may rewrite it): stored, truncated to
// leave a NUL, and loaded back.
void StoreNameWords(std::string_view name, std::atomic<uint64_t>* words, size_t word_count);
std::string LoadNameWords(const std::atomic<uint64_t>* words, size_t word_count);

// "perf cpu-clock", "perf cycles", "SIGPROF timer" or "off".
const char* SampleSourceName(SampleSource source);

struct SampleSnapshot {
  uint32_t source = 0;
  uint32_t flags = 0;
  uint32_t rate_hz = 0;
  uint64_t samples_total = 0;
  uint64_t samples_lost = 0;
  uint64_t samples_unknown = 0;
  uint64_t node_samples_total = 0;
  uint64_t node_samples_idle = 0;
  std::vector<SampledFunctionRecord> functions;  // occupied entries, in table order
};

struct FunctionRecord {
  uint32_t id = 0;
  uint64_t address = 0;
  uint64_t name_hash = 0;  // 0 until resolved
  SymbolState state = SymbolState::kEmpty;
  std::string name;        // demangled name, "0x..." when unresolved
  CounterValues counters;  // all threads, live and retired
};

struct OpenFrame {
  uint64_t address = 0;
  uint32_t function = kNoFunction;
  uint64_t entry_ticks = 0;
  bool inherited = false;
};

struct ThreadRecord {
  uint32_t slot = 0;
  uint32_t tid = 0;
  uint64_t generation = 0;
  uint32_t depth = 0;
  DiagnosticValues diagnostics;
  std::vector<OpenFrame> open_frames;  // bottom first, at most stack_depth
  uint64_t calls = 0;                  // all functions
  IoSnapshot io;
};

// What the analyzer last heard from its peers, copied under its sequence
// lock; valid is false for a segment without an exchanging analyzer (or
// one older than 1.9).
struct PeerStatusRow {
  std::string name;
  bool heard = false;
  uint64_t last_heard_unix_ms = 0;
  uint64_t accepted = 0;
  int64_t lag_ms = 0;
  uint32_t restarts = 0;
};

struct AnalyzerHealthValues {
  bool valid = false;  // the analyzer ran at least one tick
  uint64_t ticks = 0;
  uint64_t tick_failures = 0;
  uint64_t windows_analyzed = 0;
  uint64_t summaries_unsent = 0;
  uint64_t recording_failed_writes = 0;
  uint64_t alarms_failed_writes = 0;
  AnalyzerPath exchange_path = AnalyzerPath::kNone;
  AnalyzerPath recording_path = AnalyzerPath::kNone;
};

// Where the analyzer shed work or refused input (AnalyzerShedding, 1.10;
// all zero in older segments).
struct AnalyzerSheddingValues {
  uint64_t datagrams_rejected[kPeerRejectionClasses] = {};  // by the peer wire's DecodeError
  uint64_t datagram_receive_errors = 0;
  uint64_t exchange_internal_errors = 0;
  uint64_t replay_senders_forgotten = 0;
  uint64_t summaries_late = 0;
  uint64_t ticks_missed = 0;
  uint32_t io_uring_refused = 0;  // AnalyzerRingBits
};

struct PeerStatusValues {
  bool valid = false;
  uint64_t updated_unix_ms = 0;
  uint32_t peers_configured = 0;  // may exceed peers.size(): only the first are listed
  uint64_t datagrams_received = 0;
  uint64_t datagrams_accepted = 0;
  uint64_t datagrams_rejected = 0;
  uint64_t summaries_sent = 0;
  uint64_t send_errors = 0;
  std::vector<PeerStatusRow> peers;
};

// The analyzer's scores of this server in its newest compared window
// (ScoreStatusBlock, 1.11; not valid in older segments or before the first
// window).
struct ScoreRow {
  std::string metric;
  double score = 0;
  double threshold = 0;
  double ratio = 0;  // the server's value over its peers' median; 0 where the rule has none
  double sigma = 0;
  bool anomalous = false;
  bool warming_up = false;
  bool trained = false;
};

struct ScoreStatusValues {
  bool valid = false;
  uint64_t updated_unix_ms = 0;
  uint64_t window = 0;
  uint32_t servers_compared = 0;
  std::vector<ScoreRow> scores;
};

// The node-metrics record, copied under its sequence lock.
struct NodeMetricsValues {
  bool valid = false;  // false until the first sample, or if no stable copy was had
  uint64_t timestamp_ns = 0;
  uint64_t interrupts = 0;
  uint64_t context_switches = 0;
  uint64_t pages_allocated = 0;
  uint64_t heap_bytes = 0;
  uint64_t process_cpu_ns = 0;
  uint64_t run_delay_ns = 0;      // 0 in segments before 1.4
  uint64_t cpu_throttled_ns = 0;  // 0 in segments before 1.4
  uint64_t major_faults = 0;      // 0 in segments before 1.7
  uint64_t tcp_retransmitted = 0;  // 0 in segments before 1.5
  uint64_t tcp_out_of_order = 0;   // 0 in segments before 1.5
  uint64_t tcp_retransmit_timeout_us = 0;
  uint64_t tcp_round_trip_us = 0;  // a gauge; 0 in segments before 1.6
  // On the connections the process opened; 0 in segments before 1.8, whose
  // tcp_* fields above counted every connection.
  uint64_t tcp_opened_retransmitted = 0;
  uint64_t tcp_opened_out_of_order = 0;
  uint64_t tcp_opened_retransmit_timeout_us = 0;
  uint64_t disk_reads_completed = 0;
  uint64_t disk_writes_completed = 0;
  uint64_t disk_sectors_read = 0;
  uint64_t disk_sectors_written = 0;
  uint64_t disk_read_ms = 0;
  uint64_t disk_write_ms = 0;
  uint64_t disk_io_ms = 0;
  uint64_t disk_weighted_io_ms = 0;
  DiskState disk_state = DiskState::kUnknown;
  uint32_t disk_major = 0;
  uint32_t disk_minor = 0;
  std::string disk_name;
};

// The request-flow rings of every thread slot together (since 1.13).
struct FlowTotals {
  bool present = false;  // the segment has a flow region
  uint32_t sample_every = 0;
  uint32_t events_per_thread = 0;
  uint64_t published = 0;
  uint64_t cut = 0;
  uint64_t abandoned = 0;
};

struct Snapshot {
  std::string object_name;
  std::string name;
  std::string program;
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  Liveness liveness = Liveness::kStale;
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  uint64_t segment_size = 0;
  ClockSource clock_source = ClockSource::kMonotonicRaw;
  double ns_per_tick = 1.0;
  uint32_t max_functions = 0;
  uint32_t max_threads = 0;
  uint32_t stack_depth = 0;

  uint64_t taken_ticks = 0;        // in the segment's clock
  uint64_t taken_realtime_ns = 0;
  uint32_t attempts = 0;           // tries needed to get a consistent copy
  bool consistent = false;         // false if retirements kept racing every try

  std::vector<FunctionRecord> functions;  // indexed by function id
  std::vector<ThreadRecord> threads;      // live slots
  uint64_t retired_threads = 0;
  DiagnosticValues diagnostics;           // all threads, live and retired
  IoSnapshot io;                          // all threads, live and retired
  SampleSnapshot samples;
  NodeMetricsValues node_metrics;         // the last /proc sample, if any
  PeerStatusValues peer_status;
  ScoreStatusValues score_status;
  AnalyzerHealthValues analyzer_health;
  AnalyzerSheddingValues analyzer_shedding;
  FlowTotals flows;
  // ProcessCounters, in declaration order.
  uint64_t functions_registered = 0;
  uint64_t function_table_full = 0;
  uint64_t function_ids_wasted = 0;
  uint64_t threads_started = 0;
  uint64_t threads_retired = 0;
  uint64_t threads_without_slot = 0;
  uint64_t calls_without_slot = 0;
  uint64_t forks_followed = 0;
  uint64_t calls_during_hooks = 0;  // 0 in segments before 1.10
  uint64_t calls_during_hooks_lost = 0;
  uint64_t service_heartbeat_ns = 0;

  double TicksToNs(uint64_t ticks) const { return double(ticks) * ns_per_tick; }
};

// Reads the current ticks of the given clock, as the writer would.
uint64_t ReadTicks(ClockSource source);

// Adds the counters of `block` into *into (merging errno records).
void AddIoBlock(const IoBlock& block, IoSnapshot* into);

// Copies the segment into *out. Never fails on a validated reader; returns
// the snapshot with consistent=false if it could not get a clean copy.
void TakeSnapshot(const SegmentReader& reader, Snapshot* out);

// The same, of a segment this process maps itself (the in-process analyzer).
void TakeSnapshot(const SegmentView& view, const std::string& object_name, Snapshot* out);

// The peer status alone, without a whole snapshot (`limpwatch list`).
PeerStatusValues ReadPeerStatus(const SegmentView& view);

}  // namespace limpwatch::shm

#endif  // LIMPWATCH_SHM_SNAPSHOT_H_
