#include "limpwatch/shm/snapshot.h"

#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstring>

namespace limpwatch::shm {
namespace {

constexpr int kMaxAttempts = 64;

void Add(CounterValues* into, const FunctionCounters& from) {
  into->calls += from.calls.load(std::memory_order_relaxed);
  into->self_ticks += from.self_ticks.load(std::memory_order_relaxed);
  into->total_ticks += from.total_ticks.load(std::memory_order_relaxed);
}

DiagnosticValues Read(const StackDiagnostics& from) {
  return {from.overflowed_calls.load(std::memory_order_relaxed), from.unmatched_exits.load(std::memory_order_relaxed),
          from.resynced_frames.load(std::memory_order_relaxed), from.untracked_calls.load(std::memory_order_relaxed)};
}

void Accumulate(DiagnosticValues* into, const DiagnosticValues& from) {
  into->overflowed_calls += from.overflowed_calls;
  into->unmatched_exits += from.unmatched_exits;
  into->resynced_frames += from.resynced_frames;
  into->untracked_calls += from.untracked_calls;
}

uint64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

void ReadSymbols(const SegmentView& view, uint32_t count, std::vector<FunctionRecord>* functions) {
  functions->assign(count, FunctionRecord{});
  for (uint32_t id = 0; id < count; ++id) {
    const SymbolEntry& entry = view.symbols()[id];
    FunctionRecord& record = (*functions)[id];
    record.id = id;
    record.state = static_cast<SymbolState>(entry.state.load(std::memory_order_acquire));
    record.address = entry.address.load(std::memory_order_relaxed);
    if (record.state == SymbolState::kResolved || record.state == SymbolState::kUnresolvable) {
      uint32_t length = std::min<uint32_t>(entry.name_length, kSymbolNameSize - 1);
      record.name.assign(entry.name, strnlen(entry.name, length));
      record.name_hash = record.state == SymbolState::kResolved ? entry.name_hash : 0;
    } else {
      char text[32];
      std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(record.address));
      record.name = text;
    }
  }
}

void CopyAnalyzerHealth(const AnalyzerHealth& health, AnalyzerHealthValues* out) {
  AnalyzerHealthValues values;
  values.ticks = health.ticks.load(std::memory_order_relaxed);
  values.valid = values.ticks > 0;
  values.tick_failures = health.tick_failures.load(std::memory_order_relaxed);
  values.windows_analyzed = health.windows_analyzed.load(std::memory_order_relaxed);
  values.summaries_unsent = health.summaries_unsent.load(std::memory_order_relaxed);
  values.recording_failed_writes = health.recording_failed_writes.load(std::memory_order_relaxed);
  values.alarms_failed_writes = health.alarms_failed_writes.load(std::memory_order_relaxed);
  values.exchange_path = static_cast<AnalyzerPath>(health.exchange_path.load(std::memory_order_relaxed));
  values.recording_path = static_cast<AnalyzerPath>(health.recording_path.load(std::memory_order_relaxed));
  *out = values;
}

// A copy of a record its writer updates under a sequence lock (odd while it
// writes): `copy` fills a fresh Values, kept when the sequence was even
// before and unchanged after. *out is left alone when the record was never
// written, or no stable copy was had in 16 tries.
template <typename Values, typename CopyFields>
void CopyUnderSequenceLock(const std::atomic<uint64_t>& sequence, CopyFields copy, Values* out) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint64_t before = sequence.load(std::memory_order_acquire);
    if (before == 0) return;  // never written
    if (before & 1) continue;
    Values values;
    values.valid = true;
    copy(&values);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (sequence.load(std::memory_order_relaxed) == before) {
      *out = std::move(values);
      return;
    }
  }
}

void CopyAnalyzerShedding(const AnalyzerShedding& shedding, AnalyzerSheddingValues* out) {
  AnalyzerSheddingValues values;
  for (uint32_t index = 0; index < kPeerRejectionClasses; ++index) {
    values.datagrams_rejected[index] = shedding.datagrams_rejected[index].load(std::memory_order_relaxed);
  }
  values.datagram_receive_errors = shedding.datagram_receive_errors.load(std::memory_order_relaxed);
  values.exchange_internal_errors = shedding.exchange_internal_errors.load(std::memory_order_relaxed);
  values.replay_senders_forgotten = shedding.replay_senders_forgotten.load(std::memory_order_relaxed);
  values.summaries_late = shedding.summaries_late.load(std::memory_order_relaxed);
  values.ticks_missed = shedding.ticks_missed.load(std::memory_order_relaxed);
  values.io_uring_refused = shedding.io_uring_refused.load(std::memory_order_relaxed);
  *out = values;
}

void CopyPeerStatus(const PeerStatusBlock& block, PeerStatusValues* out) {
  CopyUnderSequenceLock(block.sequence, [&block](PeerStatusValues* values) {
    values->updated_unix_ms = block.updated_unix_ms.load(std::memory_order_relaxed);
    values->peers_configured = block.peers_configured.load(std::memory_order_relaxed);
    values->datagrams_received = block.datagrams_received.load(std::memory_order_relaxed);
    values->datagrams_accepted = block.datagrams_accepted.load(std::memory_order_relaxed);
    values->datagrams_rejected = block.datagrams_rejected.load(std::memory_order_relaxed);
    values->summaries_sent = block.summaries_sent.load(std::memory_order_relaxed);
    values->send_errors = block.send_errors.load(std::memory_order_relaxed);
    uint32_t listed = std::min(block.peers_listed.load(std::memory_order_relaxed), kPeerStatusEntries);
    for (uint32_t index = 0; index < listed; ++index) {
      const PeerStatusEntry& entry = block.entries[index];
      PeerStatusRow row;
      row.name = LoadNameWords(entry.name, std::size(entry.name));
      row.heard = entry.heard.load(std::memory_order_relaxed) != 0;
      row.last_heard_unix_ms = entry.last_heard_unix_ms.load(std::memory_order_relaxed);
      row.accepted = entry.accepted.load(std::memory_order_relaxed);
      row.lag_ms = entry.lag_ms.load(std::memory_order_relaxed);
      row.restarts = entry.restarts.load(std::memory_order_relaxed);
      values->peers.push_back(std::move(row));
    }
  }, out);
}

double DoubleFromBits(const std::atomic<uint64_t>& bits) {
  return std::bit_cast<double>(bits.load(std::memory_order_relaxed));
}

void CopyScoreStatus(const ScoreStatusBlock& block, ScoreStatusValues* out) {
  CopyUnderSequenceLock(block.sequence, [&block](ScoreStatusValues* values) {
    values->updated_unix_ms = block.updated_unix_ms.load(std::memory_order_relaxed);
    values->window = block.window.load(std::memory_order_relaxed);
    values->servers_compared = block.servers_compared.load(std::memory_order_relaxed);
    uint32_t listed = std::min(block.metrics_listed.load(std::memory_order_relaxed), kScoreStatusEntries);
    for (uint32_t index = 0; index < listed; ++index) {
      const ScoreStatusEntry& entry = block.entries[index];
      ScoreRow row;
      row.metric = LoadNameWords(entry.metric, std::size(entry.metric));
      row.score = DoubleFromBits(entry.score_bits);
      row.threshold = DoubleFromBits(entry.threshold_bits);
      row.ratio = DoubleFromBits(entry.ratio_bits);
      row.sigma = DoubleFromBits(entry.sigma_bits);
      uint32_t flags = entry.flags.load(std::memory_order_relaxed);
      row.anomalous = (flags & kScoreAnomalous) != 0;
      row.warming_up = (flags & kScoreWarmingUp) != 0;
      row.trained = (flags & kScoreTrained) != 0;
      values->scores.push_back(std::move(row));
    }
  }, out);
}

void ReadNodeMetrics(const NodeMetricsRecord& record, NodeMetricsValues* out) {
  CopyUnderSequenceLock(record.sequence, [&record](NodeMetricsValues* values) {
    values->timestamp_ns = record.timestamp_ns.load(std::memory_order_relaxed);
    values->interrupts = record.interrupts.load(std::memory_order_relaxed);
    values->context_switches = record.context_switches.load(std::memory_order_relaxed);
    values->pages_allocated = record.pages_allocated.load(std::memory_order_relaxed);
    values->heap_bytes = record.heap_bytes.load(std::memory_order_relaxed);
    values->process_cpu_ns = record.process_cpu_ns.load(std::memory_order_relaxed);
    values->run_delay_ns = record.run_delay_ns.load(std::memory_order_relaxed);
    values->cpu_throttled_ns = record.cpu_throttled_ns.load(std::memory_order_relaxed);
    values->tcp_retransmitted = record.tcp_retransmitted.load(std::memory_order_relaxed);
    values->tcp_out_of_order = record.tcp_out_of_order.load(std::memory_order_relaxed);
    values->tcp_retransmit_timeout_us = record.tcp_retransmit_timeout_us.load(std::memory_order_relaxed);
    values->tcp_round_trip_us = record.tcp_round_trip_us.load(std::memory_order_relaxed);
    values->major_faults = record.major_faults.load(std::memory_order_relaxed);
    values->tcp_opened_retransmitted = record.tcp_opened_retransmitted.load(std::memory_order_relaxed);
    values->tcp_opened_out_of_order = record.tcp_opened_out_of_order.load(std::memory_order_relaxed);
    values->tcp_opened_retransmit_timeout_us =
        record.tcp_opened_retransmit_timeout_us.load(std::memory_order_relaxed);
    values->disk_reads_completed = record.disk_reads_completed.load(std::memory_order_relaxed);
    values->disk_writes_completed = record.disk_writes_completed.load(std::memory_order_relaxed);
    values->disk_sectors_read = record.disk_sectors_read.load(std::memory_order_relaxed);
    values->disk_sectors_written = record.disk_sectors_written.load(std::memory_order_relaxed);
    values->disk_read_ms = record.disk_read_ms.load(std::memory_order_relaxed);
    values->disk_write_ms = record.disk_write_ms.load(std::memory_order_relaxed);
    values->disk_io_ms = record.disk_io_ms.load(std::memory_order_relaxed);
    values->disk_weighted_io_ms = record.disk_weighted_io_ms.load(std::memory_order_relaxed);
    values->disk_state = static_cast<DiskState>(record.disk_state.load(std::memory_order_relaxed));
    values->disk_major = record.disk_major.load(std::memory_order_relaxed);
    values->disk_minor = record.disk_minor.load(std::memory_order_relaxed);
    values->disk_name = LoadNameWords(record.disk_name, std::size(record.disk_name));
  }, out);
}

void ReadSamples(const SegmentView& view, SampleSnapshot* out) {
  const SampleTableHeader& table = *view.sample_table();
  out->source = table.source.load(std::memory_order_relaxed);
  out->flags = table.flags.load(std::memory_order_relaxed);
  out->rate_hz = table.rate_hz.load(std::memory_order_relaxed);
  out->samples_total = table.samples_total.load(std::memory_order_relaxed);
  out->samples_lost = table.samples_lost.load(std::memory_order_relaxed);
  out->samples_unknown = table.samples_unknown.load(std::memory_order_relaxed);
  out->node_samples_total = table.node_samples_total.load(std::memory_order_relaxed);
  out->node_samples_idle = table.node_samples_idle.load(std::memory_order_relaxed);
  for (uint32_t index = 0; index < view.sample_capacity(); ++index) {
    const SampledFunction& entry = view.sampled_functions()[index];
    uint64_t hash = entry.name_hash.load(std::memory_order_acquire);
    if (hash == 0) continue;
    SampledFunctionRecord record;
    record.name_hash = hash;
    record.name.assign(entry.name, strnlen(entry.name, sizeof entry.name));
    record.image.assign(entry.image, strnlen(entry.image, sizeof entry.image));
    record.image_kind = static_cast<ImageKind>(entry.image_kind);
    record.samples = entry.samples.load(std::memory_order_relaxed);
    record.kernel_samples = entry.kernel_samples.load(std::memory_order_relaxed);
    out->functions.push_back(std::move(record));
  }
}

// One pass over the live slots and the retired totals. Returns false when a
// retirement overlapped the pass.
bool CopyCounters(const SegmentView& view, const SegmentHeader& header, Snapshot* out) {
  uint64_t generation_before = header.retire_generation.load(std::memory_order_acquire);
  if (header.retiring_now.load(std::memory_order_acquire) != 0) return false;

  uint32_t function_count = static_cast<uint32_t>(out->functions.size());
  for (auto& function : out->functions) function.counters = {};
  out->threads.clear();
  out->diagnostics = Read(view.retired()->diagnostics);
  out->retired_threads = view.retired()->threads.load(std::memory_order_relaxed);
  for (uint32_t id = 0; id < function_count; ++id) Add(&out->functions[id].counters, view.retired_counters()[id]);
  out->io = IoSnapshot{};
  AddIoBlock(view.retired()->io, &out->io);

  for (uint32_t index = 0; index < header.max_threads; ++index) {
    const ThreadSlotHeader* slot = view.slot(index);
    if (slot->state.load(std::memory_order_acquire) != static_cast<uint32_t>(SlotState::kActive)) continue;
    ThreadRecord thread;
    thread.slot = index;
    thread.generation = slot->generation.load(std::memory_order_acquire);
    thread.tid = slot->tid.load(std::memory_order_relaxed);
    thread.depth = slot->depth.load(std::memory_order_relaxed);
    thread.diagnostics = Read(slot->diagnostics);
    const FunctionCounters* counters = view.counters(index);
    for (uint32_t id = 0; id < function_count; ++id) {
      uint64_t calls_before = out->functions[id].counters.calls;
      Add(&out->functions[id].counters, counters[id]);
      thread.calls += out->functions[id].counters.calls - calls_before;
    }
    uint32_t stored = std::min(thread.depth, header.stack_depth);
    const StackFrame* frames = view.frames(index);
    for (uint32_t level = 0; level < stored; ++level) {
      OpenFrame frame;
      frame.address = frames[level].address.load(std::memory_order_relaxed);
      frame.function = frames[level].function.load(std::memory_order_relaxed);
      frame.entry_ticks = frames[level].entry_ticks.load(std::memory_order_relaxed);
      frame.inherited = (frames[level].flags.load(std::memory_order_relaxed) & kFrameInherited) != 0;
      thread.open_frames.push_back(frame);
    }
    AddIoBlock(*view.io(index), &thread.io);
    AddIoBlock(*view.io(index), &out->io);
    Accumulate(&out->diagnostics, thread.diagnostics);
    // A slot recycled while we read it belongs to another thread now.
    if (slot->generation.load(std::memory_order_acquire) != thread.generation) return false;
    out->threads.push_back(std::move(thread));
  }
  if (header.retiring_now.load(std::memory_order_acquire) != 0) return false;
  return header.retire_generation.load(std::memory_order_acquire) == generation_before;
}

}  // namespace

void AddIoBlock(const IoBlock& block, IoSnapshot* into) {
  for (uint32_t kind = 0; kind < kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < kIoOperationCount; ++operation) {
      const IoCounters& from = block.counters[kind][operation];
      IoValues& to = into->counters[kind][operation];
      to.calls += from.calls.load(std::memory_order_relaxed);
      to.bytes += from.bytes.load(std::memory_order_relaxed);
      to.ticks += from.ticks.load(std::memory_order_relaxed);
      to.errors += from.errors.load(std::memory_order_relaxed);
    }
  }
  for (const ErrnoCount& slot : block.errnos) {
    uint32_t key = slot.key.load(std::memory_order_acquire);
    if (key == 0) continue;
    key -= 1;
    ErrnoRecord record;
    record.error = static_cast<int>(key >> 16);
    record.kind = static_cast<FdKind>(std::min<uint32_t>((key >> 8) & 0xff, kFdKindCount - 1));
    record.operation = static_cast<IoOperation>(std::min<uint32_t>(key & 0xff, kIoOperationCount - 1));
    record.count = slot.count.load(std::memory_order_relaxed);
    bool merged = false;
    for (auto& existing : into->errnos) {
      if (existing.error == record.error && existing.kind == record.kind && existing.operation == record.operation) {
        existing.count += record.count;
        merged = true;
        break;
      }
    }
    if (!merged) into->errnos.push_back(record);
  }
  into->errno_overflow += block.errno_overflow.load(std::memory_order_relaxed);
  into->untimed_calls += block.untimed_calls.load(std::memory_order_relaxed);
  for (uint32_t role = 0; role < kSocketRoleCount; ++role) {
    const IoCounters& from = block.socket_reads[role];
    IoValues& to = into->socket_reads[role];
    to.calls += from.calls.load(std::memory_order_relaxed);
    to.bytes += from.bytes.load(std::memory_order_relaxed);
    to.ticks += from.ticks.load(std::memory_order_relaxed);
    to.errors += from.errors.load(std::memory_order_relaxed);
  }
}

uint64_t ReadTicks(ClockSource source) {
  if (source == ClockSource::kTsc) return __rdtsc();
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

void TakeSnapshot(const SegmentReader& reader, Snapshot* out) {
  TakeSnapshot(reader.view(), reader.object_name(), out);
}

void TakeSnapshot(const SegmentView& view, const std::string& object_name, Snapshot* out) {
  const SegmentHeader& header = *view.header();
  *out = Snapshot{};
  out->object_name = object_name;
  out->name = header.name;
  out->program = header.program;
  out->pid = header.owner_pid;
  out->parent_pid = header.parent_pid;
  out->liveness = SegmentLiveness(header);
  out->version_major = header.version_major;
  out->version_minor = header.version_minor;
  out->segment_size = header.segment_size;
  out->clock_source = static_cast<ClockSource>(header.clock_source);
  // Refined by the owner's service thread while the program runs.
  out->ns_per_tick = std::atomic_ref<const double>(header.ns_per_tick).load(std::memory_order_relaxed);
  out->max_functions = header.max_functions;
  out->max_threads = header.max_threads;
  out->stack_depth = header.stack_depth;

  uint32_t function_count =
      std::min(header.next_function_id.load(std::memory_order_acquire), header.max_functions);
  ReadSymbols(view, function_count, &out->functions);

  for (out->attempts = 1; out->attempts <= kMaxAttempts; ++out->attempts) {
    out->taken_ticks = ReadTicks(out->clock_source);
    out->taken_realtime_ns = RealtimeNs();
    if (CopyCounters(view, header, out)) {
      out->consistent = true;
      break;
    }
    if (out->attempts > kMaxAttempts / 2) {
      timespec pause{0, 1000000};
      nanosleep(&pause, nullptr);
    }
  }
  if (!out->consistent) out->attempts = kMaxAttempts;

  ReadSamples(view, &out->samples);
  ReadNodeMetrics(*view.node_metrics(), &out->node_metrics);
  CopyPeerStatus(*view.peer_status(), &out->peer_status);
  CopyScoreStatus(*view.score_status(), &out->score_status);
  CopyAnalyzerHealth(*view.analyzer_health(), &out->analyzer_health);
  CopyAnalyzerShedding(*view.analyzer_shedding(), &out->analyzer_shedding);
  if (view.has_flows()) {
    out->flows.present = true;
    out->flows.sample_every = view.flow_descriptor()->sample_every.load(std::memory_order_relaxed);
    out->flows.events_per_thread = view.flow_events_per_thread();
    for (uint32_t slot = 0; slot < header.max_threads; ++slot) {
      const FlowRingHeader& ring = *view.flow_ring(slot);
      out->flows.published += ring.flows_published.load(std::memory_order_relaxed);
      out->flows.cut += ring.flows_cut.load(std::memory_order_relaxed);
      out->flows.abandoned += ring.flows_abandoned.load(std::memory_order_relaxed);
    }
  }

  const ProcessCounters& counters = header.counters;
  out->functions_registered = counters.functions_registered.load(std::memory_order_relaxed);
  out->function_table_full = counters.function_table_full.load(std::memory_order_relaxed);
  out->function_ids_wasted = counters.function_ids_wasted.load(std::memory_order_relaxed);
  out->threads_started = counters.threads_started.load(std::memory_order_relaxed);
  out->threads_retired = counters.threads_retired.load(std::memory_order_relaxed);
  out->threads_without_slot = counters.threads_without_slot.load(std::memory_order_relaxed);
  out->calls_without_slot = counters.calls_without_slot.load(std::memory_order_relaxed);
  out->forks_followed = counters.forks_followed.load(std::memory_order_relaxed);
  out->calls_during_hooks = counters.calls_during_hooks.load(std::memory_order_relaxed);
  out->calls_during_hooks_lost = counters.calls_during_hooks_lost.load(std::memory_order_relaxed);
  out->service_heartbeat_ns = header.service_heartbeat_ns.load(std::memory_order_relaxed);
}

PeerStatusValues ReadPeerStatus(const SegmentView& view) {
  PeerStatusValues values;
  CopyPeerStatus(*view.peer_status(), &values);
  return values;
}

void StoreNameWords(std::string_view name, std::atomic<uint64_t>* words, size_t word_count) {
  for (size_t word = 0; word < word_count; ++word) {
    uint64_t value = 0;
    for (size_t byte = 0; byte < 8; ++byte) {
      size_t at = word * 8 + byte;
      // The last byte stays NUL: a full-length name is cut by one.
      if (at < name.size() && at + 1 < word_count * 8) value |= uint64_t(static_cast<uint8_t>(name[at])) << (8 * byte);
    }
    words[word].store(value, std::memory_order_relaxed);
  }
}

std::string LoadNameWords(const std::atomic<uint64_t>* words, size_t word_count) {
  std::string name;
  for (size_t word = 0; word < word_count; ++word) {
    uint64_t bytes = words[word].load(std::memory_order_relaxed);
    for (size_t byte = 0; byte < 8; ++byte) {
      char character = static_cast<char>(bytes >> (8 * byte));
      if (character == '\0') return name;
      name += character;
    }
  }
  return name;
}

const char* SampleSourceName(SampleSource source) {
  switch (source) {
    case SampleSource::kPerfCpuClock: return "perf cpu-clock";
    case SampleSource::kPerfCycles: return "perf cycles";
    case SampleSource::kSigprofTimer: return "SIGPROF timer";
    case SampleSource::kOff: break;
  }
  return "off";
}

}  // namespace limpwatch::shm
