// The limpwatch segment: the contract between a traced process and its readers.
//
// Every traced process owns exactly one POSIX shared-memory object, named
// "limpwatch.<pid>" or "limpwatch.<LIMPWATCH_NAME>.<pid>", mode 0600. The
// process writes it; `limpwatch` and the analyzer read it. Readers may run
// while the writer runs, may start after it and may outlive it, so the format
// is plain data at fixed offsets: fixed-width integers and lock-free atomics,
// never pointers, every region located by an offset from the segment start.
//
//   offset 0  +------------------------------+
//             | SegmentHeader (4 KiB)        |  magic, version, geometry, clock factor,
//             |                              |  owner, region table, process counters
//             +------------------------------+  header.function_index
//             | FunctionIndexEntry[cap]      |  address -> dense function id (hash, linear probe)
//             +------------------------------+  header.symbols
//             | SymbolEntry[max_functions]   |  id -> address, name, 64-bit name hash
//             +------------------------------+  header.threads
//             | ThreadSlot[max_threads]      |  one per live thread, single writer:
//             |   ThreadSlotHeader           |    state, tid, diagnostics
//             |   IoBlock                    |    I/O calls per fd kind and operation, errnos
//             |   StackFrame[stack_depth]    |    the shadow stack (visible to readers)
//             |   FunctionCounters[max_fn]   |    cumulative calls / self / total ticks
//             +------------------------------+  header.retired
//             | RetiredTotals                |  counters of threads that have exited
//             |   IoBlock                    |
//             |   FunctionCounters[max_fn]   |
//             +------------------------------+  header.node_metrics
//             | NodeMetricsRecord            |  /proc samples, written once per tick
//             +------------------------------+  header.alarms
//             | AlarmRing                    |  alarms raised by the analyzer
//             |   AlarmRecord[alarm_cap]     |
//             +------------------------------+  header.samples
//             | SampleTable                  |  CPU samples per function (any image,
//             |   SampledFunction[samp_cap]  |  kernel included), one writer: the sampler
//             +------------------------------+  header.segment_size
//
// Counters are cumulative and never reset: a reader diffs two snapshots, so a
// slow reader never loses counts. A thread slot has one writer (its thread);
// RetiredTotals and the process counters are multi-writer and only ever
// changed with atomic read-modify-write operations.
//
// Thread slot states (ThreadSlotHeader::state), changed only by CAS:
//
//     kFree --acquire (CAS by the new thread)--> kActive
//     kActive --thread exit--> kRetiring --counts folded, slot zeroed--> kFree
//
// A reader skips kFree slots. While a thread retires, its counts exist twice
// (in the slot and in RetiredTotals) or partly: the retiring thread raises
// SegmentHeader::retiring_now for the duration and bumps retire_generation
// when done, and a reader that sees either change retries its snapshot.
//
// Compatibility: a reader accepts a segment whose version_major equals its own
// and whose header_size and struct sizes match; anything else is rejected with
// a message naming the mismatch. Fields are only ever added into reserved
// space, with a minor version bump.
#ifndef LIMPWATCH_SHM_LAYOUT_H_
#define LIMPWATCH_SHM_LAYOUT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace limpwatch::shm {

inline constexpr uint64_t kSegmentMagic = 0x544e454d47455357ull;  // "WSEGMENT" little-endian
inline constexpr uint16_t kVersionMajor = 1;
inline constexpr uint16_t kVersionMinor = 13;  // 1: SampleTableHeader node_samples_*, ImageKind::kNodeKernel
                                              // 2: IoBlock socket_reads + untimed_calls, NodeMetricsRecord disk_*
                                              // 3: ProcessCounters selections_applied, selection_errors,
                                              //    functions_unselected
                                              // 4: NodeMetricsRecord run_delay_ns, cpu_throttled_ns
                                              // 5: NodeMetricsRecord tcp_retransmitted, tcp_out_of_order,
                                              //    tcp_retransmit_timeout_us
                                              // 6: NodeMetricsRecord tcp_round_trip_us
                                              // 7: NodeMetricsRecord major_faults
                                              // 8: NodeMetricsRecord tcp_opened_*; tcp_* count
                                              //    only the connections the process serves
                                              // 9: AnalyzerHealth, PeerStatusBlock in the header page
                                              // 10: AnalyzerShedding in the header page,
                                              //     AlarmRecord kind, ProcessCounters
                                              //     calls_during_hooks, calls_during_hooks_lost
                                              // 11: ScoreStatusBlock in the header page
                                              // 12: AlarmRecord agreement
                                              // 13: request flows: flow_events_per_thread,
                                              //     FlowRegionDescriptor, the flows region
inline constexpr uint16_t kEndianMark = 0x0102;
inline constexpr uint32_t kHeaderSize = 4096;

// Function ids are packed with the address into one 64-bit index word, so an
// id needs kFunctionIdBits bits and an address the remaining 47 (the x86-64
// user-space half).
inline constexpr unsigned kFunctionIdBits = 17;
inline constexpr uint32_t kMaxFunctionsLimit = (1u << kFunctionIdBits) - 1;
inline constexpr uint64_t kMaxCodeAddress = (uint64_t{1} << (64 - kFunctionIdBits)) - 1;
inline constexpr uint32_t kNoFunction = 0xffffffffu;

inline constexpr uint32_t kMaxThreadsLimit = 4096;
inline constexpr uint32_t kMaxStackDepthLimit = 4096;
inline constexpr uint32_t kMaxAlarmCapacity = 65536;
inline constexpr uint32_t kMaxSampleCapacity = 1u << 20;
inline constexpr size_t kNameSize = 64;
inline constexpr size_t kSymbolNameSize = 104;
inline constexpr size_t kAlarmTopFunctions = 10;

enum class OwnerState : uint32_t {
  kCreating = 0,  // header not yet complete: readers must not trust it
  kRunning = 1,   // owner alive (stale if the owner pid is gone)
  kExited = 2,    // owner exited normally and kept the segment (LIMPWATCH_KEEP)
};

enum class ClockSource : uint32_t {
  kTsc = 1,                // invariant TSC, ticks scaled by ns_per_tick
  kMonotonicRaw = 2,       // CLOCK_MONOTONIC_RAW, one tick is one nanosecond
};

enum class SlotState : uint32_t {
  kFree = 0,
  kActive = 1,
  kRetiring = 2,
};

enum class SymbolState : uint32_t {
  kEmpty = 0,         // id not allocated
  kRegistered = 1,    // address known, name not yet resolved
  kResolved = 2,      // name and name_hash valid
  kUnresolvable = 3,  // no symbol covers the address; name holds "0x<address>"
};

// A region of the segment: bytes [offset, offset + size).
struct RegionRef {
  uint64_t offset;
  uint64_t size;
};

// Process-wide diagnostic counters: every one is a loss or an anomaly that the
// reader reports rather than hides.
struct ProcessCounters {
  std::atomic<uint64_t> functions_registered;
  std::atomic<uint64_t> function_table_full;   // calls not recorded: no room for a new function
  std::atomic<uint64_t> function_ids_wasted;   // ids lost to an insertion race
  std::atomic<uint64_t> threads_started;
  std::atomic<uint64_t> threads_retired;
  std::atomic<uint64_t> threads_without_slot;  // threads not recorded: all slots busy
  std::atomic<uint64_t> calls_without_slot;    // their calls
  std::atomic<uint64_t> forks_followed;        // a child of this process took a segment of its own
  // Selective tracing (LIMPWATCH_SELECT, since 1.3).
  std::atomic<uint64_t> selections_applied;    // manifests applied (at start and on each change)
  std::atomic<uint64_t> selection_errors;      // manifests rejected: the previous selection stayed
  std::atomic<uint64_t> functions_unselected;  // registered functions not traced under the current selection
  // Calls made while limpwatch was at work on their thread (since 1.10): by
  // a signal handler that interrupted a hook, or by code a thread runs after
  // its exit handler. They are counted in the retired totals: a function's
  // call without a frame or a time, an I/O call in full.
  std::atomic<uint64_t> calls_during_hooks;
  std::atomic<uint64_t> calls_during_hooks_lost;  // of those, function calls not counted: not registered yet
  std::atomic<uint64_t> reserved[3];
};

struct FunctionIndexEntry {
  // 0 when empty, else (address << kFunctionIdBits) | (function id + 1).
  std::atomic<uint64_t> packed;
};

struct SymbolEntry {
  std::atomic<uint64_t> address;
  uint64_t name_hash;             // FNV-1a 64 of the raw (mangled) name; valid when kResolved
  std::atomic<uint32_t> state;    // SymbolState; name fields are published by a release store here
  uint32_t name_length;           // bytes used in name, without the terminating NUL
  char name[kSymbolNameSize];     // demangled, NUL-terminated, truncated if longer
};

// Cumulative per-function counters of one thread (or of all retired threads).
// Ticks are converted to ns with SegmentHeader::ns_per_tick.
struct FunctionCounters {
  std::atomic<uint64_t> calls;        // counted on entry
  std::atomic<uint64_t> self_ticks;   // own time: children's time subtracted, blocked time kept
  std::atomic<uint64_t> total_ticks;  // entry to exit, children included
};

// Anomalies of one thread's shadow stack.
struct StackDiagnostics {
  std::atomic<uint64_t> overflowed_calls;  // calls deeper than stack_depth: counted, not timed
  std::atomic<uint64_t> unmatched_exits;   // an exit with no matching entry: ignored
  std::atomic<uint64_t> resynced_frames;   // frames closed without their exit (longjmp, unwinding)
  std::atomic<uint64_t> untracked_calls;   // calls of functions the table had no room for
};

enum StackFrameFlags : uint32_t {
  kFrameInherited = 1u << 0,  // entered in the parent before fork: popped, never counted
  kFrameUntracked = 1u << 1,  // function not recorded (table full / not selected)
};

struct StackFrame {
  std::atomic<uint64_t> address;   // the function's address, to match its exit
  std::atomic<uint32_t> function;  // function id, or kNoFunction
  std::atomic<uint32_t> flags;     // StackFrameFlags
  std::atomic<uint64_t> entry_ticks;
  std::atomic<uint64_t> child_ticks;  // total time of traced children so far
};

// ---- I/O system calls, per thread (filled by the interposed calls in hooks/) ----

enum class FdKind : uint32_t {
  kFile = 0,    // regular file (storage)
  kTcp = 1,
  kUdp = 2,
  kUnix = 3,    // Unix-domain socket
  kPipe = 4,
  kOther = 5,   // device, eventfd, unknown
};
inline constexpr uint32_t kFdKindCount = 6;

enum class IoOperation : uint32_t {
  kRead = 0,     // read, pread, readv, preadv, recv*
  kWrite = 1,    // write, pwrite, writev, pwritev, send*
  kSync = 2,     // fsync, fdatasync, sync_file_range
  kOpen = 3,     // open, openat, creat, socket, pipe
  kClose = 4,
  kAccept = 5,
  kConnect = 6,
  kOther = 7,    // dup, fcntl, ...
};
inline constexpr uint32_t kIoOperationCount = 8;
inline constexpr uint32_t kErrnoSlots = 30;

struct IoCounters {
  std::atomic<uint64_t> calls;
  std::atomic<uint64_t> bytes;   // transferred, for reads and writes
  std::atomic<uint64_t> ticks;   // service time
  std::atomic<uint64_t> errors;  // calls that returned -1
};

// How often one errno was returned by one (kind, operation). The first
// kErrnoSlots distinct combinations get a slot; later ones are counted in
// IoBlock::errno_overflow.
struct ErrnoCount {
  std::atomic<uint32_t> key;  // 0 = free, else (errno << 16) | (kind << 8) | operation, + 1
  uint32_t reserved;
  std::atomic<uint64_t> count;
};

// Who opened a socket's connection, for seed 001's nsread and ncread: a server
// reads requests on sockets it accept()ed, a client reads responses on sockets
// it connect()ed. Reads on those sockets are counted a second time in
// IoBlock::socket_reads[role] (not MSG_PEEK receives, nor the EAGAIN returns
// of non-blocking sockets: they read no request); sockets of neither origin
// (socketpair, an unconnected UDP socket) count in neither.
enum class SocketRole : uint32_t {
  kAccepted = 0,
  kConnected = 1,
};
inline constexpr uint32_t kSocketRoleCount = 2;

struct IoBlock {
  IoCounters counters[kFdKindCount][kIoOperationCount];
  ErrnoCount errnos[kErrnoSlots];
  std::atomic<uint64_t> errno_overflow;
  std::atomic<uint64_t> untimed_calls;  // counted, but their service time could not be measured (ticks 0)
  std::atomic<uint64_t> reserved[2];
  IoCounters socket_reads[kSocketRoleCount];  // reads again, by SocketRole (since 1.2)
};

struct ThreadSlotHeader {
  std::atomic<uint32_t> state;  // SlotState
  std::atomic<uint32_t> tid;
  std::atomic<uint64_t> generation;  // bumped on every acquire, so a reader sees reuse
  std::atomic<uint64_t> acquired_ticks;
  std::atomic<uint32_t> depth;       // logical depth; frames above stack_depth are not stored
  uint32_t reserved_u32;
  StackDiagnostics diagnostics;
  std::atomic<uint64_t> reserved[24];
};

struct RetiredTotalsHeader {
  std::atomic<uint64_t> threads;
  StackDiagnostics diagnostics;
  std::atomic<uint64_t> reserved[3];
  IoBlock io;
};

// Node-wide samples of /proc, written by the analyzer side once per tick under
// a sequence lock (odd = being written). Filled by the node-metrics code
// (analyzer/node_metrics.h): interrupts and context_switches from /proc/stat,
// pages_allocated the sum of /proc/vmstat pgalloc_*, heap_bytes what malloc
// holds from the system (arena + mmapped blocks), process_cpu_ns this
// process's CPU time, disk_* the /proc/diskstats line of the storage device,
// run_delay_ns the time this process's threads waited for a CPU while
// runnable (the sum of /proc/self/task/*/schedstat's second field),
// cpu_throttled_ns the time a CPU quota held this process's cgroup back
// (cpu.stat), counted from the first sample and across moves between cgroups,
// tcp_retransmitted and tcp_out_of_order the segments this process's TCP
// connections retransmitted (less those the receiver reported as
// duplicates) and received out of order (TCP_INFO), counted
// from the first sample, tcp_retransmit_timeout_us each retransmission
// weighted by its connection's retransmission timeout at the time,
// tcp_round_trip_us the median smoothed round-trip time of the connections
// that moved bytes since the previous sample (0: none did), a gauge
// (analyzer/tcp_loss_counters.h), major_faults the page faults of this
// process that had to read from storage (/proc/self/stat majflt). Since 1.8
// the tcp_* fields count the connections this process serves (accepted on a
// port it listens on) and tcp_opened_* the ones it opened to other services,
// whose losses may be the far end's.
struct NodeMetricsRecord {
  std::atomic<uint64_t> sequence;
  std::atomic<uint64_t> timestamp_ns;  // CLOCK_REALTIME of the sample
  std::atomic<uint64_t> interrupts;
  std::atomic<uint64_t> context_switches;
  std::atomic<uint64_t> pages_allocated;
  std::atomic<uint64_t> heap_bytes;
  std::atomic<uint64_t> process_cpu_ns;
  std::atomic<uint64_t> disk_reads_completed;
  std::atomic<uint64_t> disk_writes_completed;
  std::atomic<uint64_t> disk_sectors_read;
  std::atomic<uint64_t> disk_sectors_written;
  std::atomic<uint64_t> disk_read_ms;
  std::atomic<uint64_t> disk_write_ms;
  std::atomic<uint64_t> disk_io_ms;
  std::atomic<uint64_t> disk_weighted_io_ms;
  // Which device the disk_* fields describe (since 1.2): the block device
  // holding LIMPWATCH_STORAGE_DIR, a partition standing for itself.
  std::atomic<uint32_t> disk_state;  // DiskState
  std::atomic<uint32_t> disk_major;
  std::atomic<uint32_t> disk_minor;
  uint32_t reserved_u32;
  std::atomic<uint64_t> disk_name[4];  // device name, NUL-padded bytes in little-endian words ("vda1")
  std::atomic<uint64_t> run_delay_ns;      // since 1.4
  std::atomic<uint64_t> cpu_throttled_ns;  // since 1.4
  std::atomic<uint64_t> tcp_retransmitted;  // since 1.5
  std::atomic<uint64_t> tcp_out_of_order;   // since 1.5
  std::atomic<uint64_t> tcp_retransmit_timeout_us;  // since 1.5
  std::atomic<uint64_t> tcp_round_trip_us;          // since 1.6
  std::atomic<uint64_t> major_faults;               // since 1.7
  std::atomic<uint64_t> tcp_opened_retransmitted;   // since 1.8
  std::atomic<uint64_t> tcp_opened_out_of_order;    // since 1.8
  std::atomic<uint64_t> tcp_opened_retransmit_timeout_us;  // since 1.8
  std::atomic<uint64_t> reserved[33];
};

// NodeMetricsRecord::disk_state. Only kDevice has disk_* counters.
enum class DiskState : uint32_t {
  kUnknown = 0,        // not sampled yet
  kDevice = 1,         // a block device; its /proc/diskstats line is sampled
  kNoBlockDevice = 2,  // the directory is on tmpfs, overlay, NFS, ...: no device to sample
  kBadDirectory = 3,   // LIMPWATCH_STORAGE_DIR could not be examined (missing, no permission)
  kNotInDiskstats = 4, // a device, but /proc/diskstats has no line for it
};

enum class Resource : uint32_t {
  kUnknown = 0,
  kDisk = 1,
  kNetwork = 2,
  kCpu = 3,
  kMemory = 4,
  kProcess = 5,  // a peer crashed or hung
};

// One alarm, published by a release store of `sequence` (its 1-based number
// in the ring; 0 = never written). A reader copies the record and accepts it
// if `sequence` is unchanged afterwards.
struct AlarmRecord {
  std::atomic<uint64_t> sequence;
  uint64_t time_ns;            // CLOCK_REALTIME when raised
  uint32_t resource;           // Resource
  uint32_t metric_count;
  double score;
  double threshold;
  char server[kNameSize];      // the indicted server
  char metrics[kNameSize];     // metric names, comma separated
  uint64_t top_function_hashes[kAlarmTopFunctions];
  uint32_t kind;               // the analyzer's AlarmKind + 1 (since 1.10); 0: not recorded
  // Since 1.12: how many analyzers of the cluster hold this alarm open (low
  // 16 bits, this one included) of how many whose word this analyzer has
  // (high 16 bits). Stored again by the analyzer, alone, each window while
  // the alarm is open, as its peers' verdicts arrive; 0: not recorded.
  std::atomic<uint32_t> agreement;
};

constexpr uint32_t PackAgreement(uint32_t reporters, uint32_t analyzers) {
  auto clamp = [](uint32_t value) { return value > 0xFFFF ? 0xFFFFu : value; };
  return clamp(reporters) | (clamp(analyzers) << 16);
}
constexpr uint32_t AgreementReporters(uint32_t agreement) { return agreement & 0xFFFF; }
constexpr uint32_t AgreementAnalyzers(uint32_t agreement) { return agreement >> 16; }

struct AlarmRingHeader {
  std::atomic<uint64_t> next_sequence;  // sequence of the next alarm to be written
  uint64_t reserved[7];
};

// ---- CPU samples (filled by the sampler) ----

enum class ImageKind : uint32_t {
  kUnknown = 0,
  kExecutable = 1,
  kSharedLibrary = 2,
  kKernel = 3,
  kNodeKernel = 4,  // system-wide kernel profile (LIMPWATCH_SAMPLE_SYSTEM=1): any task, any CPU
};

// SampleTableHeader::source.
enum class SampleSource : uint32_t {
  kOff = 0,
  kPerfCpuClock = 1,
  kPerfCycles = 2,
  kSigprofTimer = 3,
};

// SampleTableHeader::flags.
enum SampleFlags : uint32_t {
  kSamplesIncludeKernel = 1u << 0,  // the process's kernel-mode samples are recorded
  kSamplesHaveCallchains = 1u << 1, // kernel samples name their innermost user frame
  kSamplesNodeProfile = 1u << 2,    // kNodeKernel entries are being recorded
  kSamplesPerCpuEvents = 1u << 3,   // one event per CPU for every task, this process's samples kept
  kSamplesSharedEvents = 1u << 4,   // those events shared by the node's traced processes, one holding them
};

// One function seen by the sampler, keyed by the hash of its name, so that a
// sampled function and a traced function of the same name share a key.
// kNodeKernel entries are keyed by NodeKernelFunctionHash(name) instead, so
// the node's kernel profile never mixes with this process's own samples.
// Written only by the sampler thread; `name_hash` is published last.
struct SampledFunction {
  std::atomic<uint64_t> name_hash;  // 0 = free
  std::atomic<uint64_t> samples;         // samples whose instruction pointer was in this function
  std::atomic<uint64_t> kernel_samples;  // kernel samples whose innermost user frame was this function
  uint32_t image_kind;                   // ImageKind
  uint32_t reserved;
  char name[88];
  char image[32];  // basename of the image
};

struct SampleTableHeader {
  std::atomic<uint64_t> samples_total;
  std::atomic<uint64_t> samples_lost;      // dropped by the kernel or the table was full
  std::atomic<uint64_t> samples_unknown;   // no symbol covered the address
  std::atomic<uint32_t> source;            // SampleSource: 0 off, 1 perf cpu-clock, 2 perf cycles, 3 SIGPROF timer
  std::atomic<uint32_t> flags;             // SampleFlags: kernel samples, callchains, node profile
  std::atomic<uint32_t> rate_hz;
  uint32_t reserved_u32;
  std::atomic<uint64_t> node_samples_total;  // system-wide kernel samples, idle ones included
  std::atomic<uint64_t> node_samples_idle;   // of those, in the idle loop: in no kNodeKernel entry
  std::atomic<uint64_t> reserved[1];
};

// ---- What the analyzer hears from its peers (since 1.9) ----
//
// Kept in the header page, after SegmentHeader (which leaves most of its
// 4 KiB unused), so that the region table and the segment's size stay as
// they were. Written once a tick by the analyzer thread under a sequence
// lock (odd = being written); a reader copies the block and keeps the copy
// if the sequence was even and unchanged. A segment without an analyzer, or
// with an analyzer that has no peers, has sequence 0.
inline constexpr uint32_t kAnalyzerHealthOffset = 1984;
inline constexpr uint32_t kPeerStatusOffset = 2048;
inline constexpr uint32_t kPeerStatusEntries = 20;  // the first peers of the list; the others are counted

// How the in-process analyzer keeps up, so that "no alarm" can be told from
// "could not look": each a counter (or a state) of its own, stored as it
// changes; all zero without an analyzer.
enum class AnalyzerPath : uint32_t { kNone = 0, kIoUring = 1, kPlainCalls = 2 };  // plain: sendmsg, pwrite, ...

struct AnalyzerHealth {
  std::atomic<uint64_t> ticks;               // ticks run
  std::atomic<uint64_t> tick_failures;       // ticks that failed (logged) and were skipped
  std::atomic<uint64_t> windows_analyzed;    // windows the cluster was compared in
  std::atomic<uint64_t> summaries_unsent;    // this server's summaries the encoder refused
  std::atomic<uint64_t> recording_failed_writes;
  std::atomic<uint64_t> alarms_failed_writes;  // appends to the LIMPWATCH_ALARMS file that failed
  std::atomic<uint32_t> exchange_path;   // AnalyzerPath of the peer exchange
  std::atomic<uint32_t> recording_path;  // AnalyzerPath of the recording's writes (kNone: not recording)
  std::atomic<uint64_t> reserved;
};

// ---- Where the analyzer sheds work or refuses input (since 1.10) ----
//
// Kept in the header page, before AnalyzerHealth. Every place where the
// in-process analyzer drops an input or skips work to protect the server is
// counted here or in AnalyzerHealth (the hot path's own: ProcessCounters,
// StackDiagnostics, SampleTableHeader::samples_lost), so that an operator
// can tell "no alarm" from "could not look". Written by the analyzer thread
// once a tick, relaxed stores: each counter is exact on its own, the block
// is not one instant. All zero without an analyzer, and in 1.9 segments.
inline constexpr uint32_t kAnalyzerSheddingOffset = 1728;
// Rejected peer datagrams by class: slot i counts the peer wire's
// DecodeError i (analyzer/peer_wire.h: 1 truncated .. 15 unknown sender);
// slot 0 stays 0, the classes a later wire adds take the free slots.
inline constexpr uint32_t kPeerRejectionClasses = 16;

// AnalyzerShedding::io_uring_refused: where the analyzer wanted an io_uring
// (LIMPWATCH_IO_URING not 0) and the kernel refused it, so it makes plain
// system calls there, which a slow disk or a busy socket can hold up.
enum AnalyzerRingBits : uint32_t {
  kRingOfExchange = 1u << 0,
  kRingOfRecording = 1u << 1,
  kRingOfAlarmsFile = 1u << 2,
};

struct AnalyzerShedding {
  std::atomic<uint64_t> datagrams_rejected[kPeerRejectionClasses];
  std::atomic<uint64_t> datagram_receive_errors;   // receives the socket or the ring failed
  std::atomic<uint64_t> exchange_internal_errors;  // exceptions stopped at the exchange's boundary
  std::atomic<uint64_t> replay_senders_forgotten;  // senders the full replay table evicted (their replay state lost)
  std::atomic<uint64_t> summaries_late;  // peers' summaries that arrived after their window was compared: not compared
  std::atomic<uint64_t> ticks_missed;    // tick boundaries that passed while a tick still ran: windows not looked at
  std::atomic<uint32_t> io_uring_refused;  // AnalyzerRingBits
  std::atomic<uint32_t> reserved_u32;
  std::atomic<uint64_t> reserved[10];
};

struct PeerStatusEntry {
  // As configured, NUL-padded bytes in little-endian words (atomic, as
  // everything a reader copies under the sequence lock).
  std::atomic<uint64_t> name[kNameSize / 8];
  std::atomic<uint64_t> last_heard_unix_ms;  // when its last summary was accepted here; 0: never
  std::atomic<uint64_t> accepted;            // its summaries accepted
  // When its last summary was accepted here, minus the end of the window it
  // covers (its own clock): the exchange's delay plus the difference of the
  // two clocks. Peers sending at the same tick show the same lag; one whose
  // clock is off shows a lag that differs by as much.
  std::atomic<int64_t> lag_ms;
  std::atomic<uint32_t> restarts;  // new boots of it seen after the first
  std::atomic<uint32_t> heard;     // 1 once a summary was accepted
};

struct PeerStatusBlock {
  std::atomic<uint64_t> sequence;
  std::atomic<uint64_t> updated_unix_ms;
  std::atomic<uint32_t> peers_configured;
  std::atomic<uint32_t> peers_listed;  // entries filled: min(peers_configured, kPeerStatusEntries)
  std::atomic<uint64_t> datagrams_received;
  std::atomic<uint64_t> datagrams_accepted;
  std::atomic<uint64_t> datagrams_rejected;  // every rejection class together (peer_counters.h)
  std::atomic<uint64_t> summaries_sent;
  std::atomic<uint64_t> send_errors;
  PeerStatusEntry entries[kPeerStatusEntries];
};

// ---- The analyzer's scores of this server, newest window (since 1.11) ----
//
// Per compared metric, the score the analyzer gave this server in the last
// window it compared, against the threshold that would have marked it: what
// an operator (or Prometheus) watches to see a server drift towards an
// alarm. Under the same sequence lock as PeerStatusBlock, written once a
// compared window by the analyzer thread; sequence 0 until the first.
inline constexpr uint32_t kScoreStatusOffset = 640;
inline constexpr uint32_t kScoreStatusEntries = 16;  // kComparedMetricCount (12) and room to grow

enum ScoreFlags : uint32_t {
  kScoreAnomalous = 1u << 0,   // over its threshold in this window
  kScoreWarmingUp = 1u << 1,   // among the server's first windows: never counted
  kScoreTrained = 1u << 2,     // the threshold came from training
};

struct ScoreStatusEntry {
  std::atomic<uint64_t> metric[2];  // its name (dread, time, ...), NUL-padded words
  // IEEE doubles, as their bits: the evidence (calibrated rule, nats) or the
  // distance (seed rule), the threshold it is held to, the server's value
  // over its peers' median, and the noise it is judged against.
  std::atomic<uint64_t> score_bits;
  std::atomic<uint64_t> threshold_bits;
  std::atomic<uint64_t> ratio_bits;
  std::atomic<uint64_t> sigma_bits;
  std::atomic<uint32_t> flags;  // ScoreFlags
  std::atomic<uint32_t> reserved;
};

struct ScoreStatusBlock {
  std::atomic<uint64_t> sequence;
  std::atomic<uint64_t> updated_unix_ms;  // when the window was compared
  std::atomic<uint64_t> window;           // the window's number
  std::atomic<uint32_t> servers_compared;
  std::atomic<uint32_t> metrics_listed;
  ScoreStatusEntry entries[kScoreStatusEntries];
};

// ---- Request flows (since 1.13) ----
//
// A sampled request's whole traced call tree: one in N outermost traced
// calls of a thread, or of the functions the selection manifest marks
// `request`, recorded with its traced descendants' enter and exit times.
// Each thread slot owns one ring of FlowEvents in the flows region, written
// only by the thread in the slot and kept across the slot's threads, so the
// flows of a thread that has exited stay readable until overwritten.
//
// A flow is the events
//   kFlowBegin (ticks: the root's entry; value: the thread's tid)
//   kFlowEnter / kFlowExit (ticks; function id; value: depth below the root)
//   kFlowEnd (ticks: the root's exit; function: the flow's sequence number
//             in this ring, low 32 bits; value: events before this one)
// and is published by a release store of FlowRingHeader::head past its end
// record. A flow is never longer than max_flow_events (half the ring, end
// record included): the writer stops appending at the bound and marks the
// end record kFlowCut. So a reader that copies the ring and reads `head`
// again trusts every position at or after head + max_flow_events - ring
// size, and parses whole flows backwards from the head it read first.
inline constexpr uint32_t kFlowRegionOffset = 1568;  // FlowRegionDescriptor in the header page
inline constexpr uint32_t kMaxFlowEventsPerThread = 1u << 20;
inline constexpr uint32_t kMinFlowEventsPerThread = 64;
// The runtime's defaults (LIMPWATCH_FLOW_SAMPLE, LIMPWATCH_FLOW_EVENTS); the
// sampling rate is the one whose cost hotpath_benchmark measures.
inline constexpr uint32_t kDefaultFlowSampleEvery = 64;
inline constexpr uint32_t kDefaultFlowEventsPerThread = 4096;

enum class FlowEventKind : uint32_t { kBegin = 0, kEnter = 1, kExit = 2, kEnd = 3 };

enum FlowEndFlags : uint32_t {
  kFlowCut = 1u << 0,  // reached max_flow_events: later calls of the flow were not recorded
};

// FlowEvent::info: kind in bits 0-1, flags in bits 2-3, a value in bits 4-31.
inline constexpr uint32_t kFlowValueShift = 4;
inline constexpr uint32_t kFlowValueLimit = (1u << (32 - kFlowValueShift)) - 1;
constexpr uint32_t PackFlowInfo(FlowEventKind kind, uint32_t flags, uint32_t value) {
  return static_cast<uint32_t>(kind) | (flags << 2) | (value << kFlowValueShift);
}
constexpr FlowEventKind FlowInfoKind(uint32_t info) { return static_cast<FlowEventKind>(info & 3u); }
constexpr uint32_t FlowInfoFlags(uint32_t info) { return (info >> 2) & 3u; }
constexpr uint32_t FlowInfoValue(uint32_t info) { return info >> kFlowValueShift; }

struct FlowEvent {
  std::atomic<uint64_t> ticks;
  std::atomic<uint32_t> function;
  std::atomic<uint32_t> info;
};

struct FlowRingHeader {
  std::atomic<uint64_t> head;              // events ever written up to the end of the last published flow
  std::atomic<uint64_t> flows_published;   // the sequence number of the last published flow
  std::atomic<uint64_t> flows_cut;         // of those, cut at max_flow_events
  std::atomic<uint64_t> flows_abandoned;   // started and never published: the thread exited, or the root
                                           // frame was lost (longjmp past it)
  std::atomic<uint64_t> reserved[4];
};

struct FlowRegionDescriptor {
  RegionRef region;                 // the flows region; size 0 when the segment has none
  uint32_t events_per_thread;       // equal to SegmentHeader::flow_events_per_thread
  uint32_t max_flow_events;         // the bound of one flow, end record included
  std::atomic<uint32_t> sample_every;  // 1 in N root calls starts a flow (0: sampling off)
  uint32_t reserved_u32;
  uint64_t reserved[2];
};

struct SegmentHeader {
  uint64_t magic;
  uint16_t version_major;
  uint16_t version_minor;
  uint16_t endian_mark;
  uint16_t reserved_u16;
  uint32_t header_size;
  std::atomic<uint32_t> owner_state;  // OwnerState; kRunning published last at creation
  uint64_t segment_size;

  // Owner identity. owner_start_time is field 22 of /proc/<pid>/stat, so a
  // reused pid is not mistaken for the owner.
  uint32_t owner_pid;
  uint32_t parent_pid;
  uint64_t owner_start_time;
  uint64_t created_realtime_ns;
  char name[kNameSize];     // LIMPWATCH_NAME, or empty
  char program[kNameSize];  // basename of the executable

  // Clock: ns = (ticks - clock_ref_ticks) * ns_per_tick + clock_ref_realtime_ns
  uint32_t clock_source;    // ClockSource
  uint32_t reserved_u32;
  double ns_per_tick;
  uint64_t clock_ref_ticks;
  uint64_t clock_ref_realtime_ns;

  // Geometry.
  uint32_t max_functions;
  uint32_t function_index_capacity;  // power of two, >= 2 * max_functions
  uint32_t max_threads;
  uint32_t stack_depth;
  uint32_t alarm_capacity;
  uint32_t thread_slot_size;  // bytes per ThreadSlot, including frames and counters

  // Sizes of the structs, so a reader built from another layout refuses.
  uint32_t sizeof_symbol_entry;
  uint32_t sizeof_function_counters;
  uint32_t sizeof_stack_frame;
  uint32_t sizeof_thread_slot_header;
  uint32_t sizeof_node_metrics;
  uint32_t sizeof_alarm_record;
  uint32_t sizeof_io_block;
  uint32_t sizeof_sampled_function;
  uint32_t sample_capacity;  // power of two
  uint32_t flow_events_per_thread;  // since 1.13: power of two; 0 = no flows region

  RegionRef function_index;
  RegionRef symbols;
  RegionRef threads;
  RegionRef retired;
  RegionRef node_metrics;
  RegionRef alarms;
  RegionRef samples;

  std::atomic<uint32_t> next_function_id;
  std::atomic<uint32_t> retiring_now;
  std::atomic<uint64_t> retire_generation;
  std::atomic<uint64_t> service_heartbeat_ns;  // CLOCK_REALTIME, bumped by the service thread
  ProcessCounters counters;
};

// ---- The frozen format. Changing any of these is a major version bump. ----

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint64_t>) == 8 && alignof(std::atomic<uint64_t>) == 8);
static_assert(sizeof(std::atomic<uint32_t>) == 4);

static_assert(sizeof(RegionRef) == 16);
static_assert(sizeof(ProcessCounters) == 16 * 8);
static_assert(sizeof(FunctionIndexEntry) == 8);
static_assert(sizeof(SymbolEntry) == 128);
static_assert(offsetof(SymbolEntry, name) == 24);
static_assert(sizeof(FunctionCounters) == 24);
static_assert(sizeof(StackDiagnostics) == 32);
static_assert(sizeof(StackFrame) == 32);
static_assert(sizeof(ThreadSlotHeader) == 256);
static_assert(offsetof(ThreadSlotHeader, diagnostics) == 32);
static_assert(sizeof(IoCounters) == 32);
static_assert(sizeof(ErrnoCount) == 16);
static_assert(sizeof(IoBlock) ==
              kFdKindCount * kIoOperationCount * 32 + kErrnoSlots * 16 + 32 + kSocketRoleCount * 32);
static_assert(offsetof(IoBlock, socket_reads) == kFdKindCount * kIoOperationCount * 32 + kErrnoSlots * 16 + 32);
static_assert(sizeof(IoBlock) % 64 == 0);
static_assert(sizeof(RetiredTotalsHeader) == 64 + sizeof(IoBlock));
static_assert(sizeof(SampledFunction) == 152);
static_assert(sizeof(SampleTableHeader) == 64);
static_assert(sizeof(NodeMetricsRecord) == 512);
static_assert(offsetof(NodeMetricsRecord, disk_name) == 136);
static_assert(sizeof(AlarmRecord) == 256);
static_assert(sizeof(AlarmRingHeader) == 64);
static_assert(offsetof(SegmentHeader, magic) == 0);
static_assert(offsetof(SegmentHeader, version_major) == 8);
static_assert(offsetof(SegmentHeader, header_size) == 16);
static_assert(offsetof(SegmentHeader, segment_size) == 24);
static_assert(offsetof(SegmentHeader, owner_pid) == 32);
static_assert(offsetof(SegmentHeader, name) == 56);
static_assert(offsetof(SegmentHeader, clock_source) == 184);
static_assert(offsetof(SegmentHeader, ns_per_tick) == 192);
static_assert(offsetof(SegmentHeader, max_functions) == 216);
static_assert(offsetof(SegmentHeader, function_index) == 280);
static_assert(offsetof(SegmentHeader, samples) == 376);
static_assert(offsetof(SegmentHeader, counters) == 416);
static_assert(sizeof(SegmentHeader) <= kHeaderSize);
static_assert(sizeof(AnalyzerHealth) == 64);
static_assert(sizeof(AnalyzerShedding) == 256);
static_assert(sizeof(SegmentHeader) <= kAnalyzerSheddingOffset);
static_assert(kAnalyzerSheddingOffset + sizeof(AnalyzerShedding) <= kAnalyzerHealthOffset);
static_assert(sizeof(SegmentHeader) <= kAnalyzerHealthOffset);
static_assert(kAnalyzerHealthOffset + sizeof(AnalyzerHealth) <= kPeerStatusOffset);
static_assert(sizeof(PeerStatusEntry) == 96);
static_assert(sizeof(PeerStatusBlock) == 64 + kPeerStatusEntries * 96);
static_assert(kPeerStatusOffset + sizeof(PeerStatusBlock) <= kHeaderSize);
static_assert(sizeof(ScoreStatusEntry) == 56);
static_assert(sizeof(ScoreStatusBlock) == 32 + kScoreStatusEntries * 56);
static_assert(sizeof(SegmentHeader) <= kScoreStatusOffset);
static_assert(kScoreStatusOffset + sizeof(ScoreStatusBlock) <= kFlowRegionOffset);
static_assert(sizeof(FlowEvent) == 16);
static_assert(sizeof(FlowRingHeader) == 64);
static_assert(sizeof(FlowRegionDescriptor) == 48);
static_assert(kFlowRegionOffset + sizeof(FlowRegionDescriptor) <= kAnalyzerSheddingOffset);

template <typename T>
inline constexpr bool kIsSegmentPod =
    std::is_standard_layout_v<T> && std::is_trivially_destructible_v<T>;
static_assert(kIsSegmentPod<SegmentHeader>);
static_assert(kIsSegmentPod<SymbolEntry>);
static_assert(kIsSegmentPod<ThreadSlotHeader>);
static_assert(kIsSegmentPod<StackFrame>);
static_assert(kIsSegmentPod<FunctionCounters>);
static_assert(kIsSegmentPod<NodeMetricsRecord>);
static_assert(kIsSegmentPod<AlarmRecord>);
static_assert(kIsSegmentPod<IoBlock>);
static_assert(kIsSegmentPod<SampledFunction>);

// The geometry a segment is created with; every size derives from it.
struct Geometry {
  uint32_t max_functions = 4096;
  uint32_t max_threads = 128;
  uint32_t stack_depth = 256;
  uint32_t alarm_capacity = 256;
  uint32_t sample_capacity = 8192;  // rounded up to a power of two
  uint32_t flow_events = 0;         // per thread slot, rounded up to a power of two; 0 = no flows
};

// Byte layout computed from a geometry. Both the writer and the validating
// reader use this one function, so they cannot disagree.
struct Layout {
  uint32_t function_index_capacity;
  uint64_t thread_slot_size;
  RegionRef function_index;
  RegionRef symbols;
  RegionRef threads;
  RegionRef retired;
  RegionRef node_metrics;
  RegionRef alarms;
  RegionRef samples;
  uint32_t sample_capacity;
  RegionRef flows;  // size 0 without flows
  uint32_t flow_events_per_thread;
  uint32_t max_flow_events;
  uint64_t flow_ring_size;  // bytes per thread slot's ring, header included
  uint64_t segment_size;
};

// Returns false (and leaves *out untouched) when the geometry is out of the
// supported bounds.
bool ComputeLayout(const Geometry& geometry, Layout* out);

// Offsets inside one thread slot.
inline constexpr uint64_t SlotIoOffset() { return sizeof(ThreadSlotHeader); }
inline constexpr uint64_t SlotFramesOffset() { return sizeof(ThreadSlotHeader) + sizeof(IoBlock); }
// The bound of one flow in a ring of `events_per_thread`.
constexpr uint32_t MaxFlowEvents(uint32_t events_per_thread) { return events_per_thread / 2; }

inline constexpr uint64_t SlotCountersOffset(uint32_t stack_depth) {
  return SlotFramesOffset() + uint64_t{stack_depth} * sizeof(StackFrame);
}

}  // namespace limpwatch::shm

#endif  // LIMPWATCH_SHM_LAYOUT_H_
