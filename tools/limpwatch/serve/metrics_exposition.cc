#include "serve/metrics_exposition.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "format.h"
#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "serve/exposition_writer.h"

namespace limpwatch::cli::serve {
namespace {

using Labels = std::vector<std::string>;

double Seconds(const shm::Snapshot& snapshot, uint64_t ticks) { return snapshot.TicksToNs(ticks) / 1e9; }

// Every family, declared in the order the page shows them.
struct Families {
  explicit Families(Exposition* page);

  MetricFamily& server_info;
  MetricFamily& start_time;
  MetricFamily& snapshot_consistent;
  MetricFamily& traced_calls;
  MetricFamily& untracked_calls;
  MetricFamily& overflowed_calls;
  MetricFamily& resynced_frames;
  MetricFamily& unmatched_exits;
  MetricFamily& calls_without_slot;
  MetricFamily& threads_without_slot;
  MetricFamily& calls_during_hooks_lost;
  MetricFamily& functions_traced;
  MetricFamily& function_calls;
  MetricFamily& function_self;
  MetricFamily& io_calls;
  MetricFamily& io_bytes;
  MetricFamily& io_seconds;
  MetricFamily& io_errors;
  MetricFamily& io_errno;
  MetricFamily& io_errno_unslotted;
  MetricFamily& service_calls;
  MetricFamily& service_seconds;
  MetricFamily& cpu_samples;
  MetricFamily& cpu_samples_lost;
  MetricFamily& cpu_samples_unknown;
  MetricFamily& process_cpu;
  MetricFamily& cpu_wait;
  MetricFamily& heap_bytes;
  MetricFamily& major_faults;
  MetricFamily& tcp_retransmitted;
  MetricFamily& analyzer_ticks;
  MetricFamily& analyzer_tick_failures;
  MetricFamily& analyzer_windows;
  MetricFamily& analyzer_summaries_unsent;
  MetricFamily& analyzer_recording_lost;
  MetricFamily& analyzer_alarms_file_lost;
  MetricFamily& analyzer_summaries_late;
  MetricFamily& analyzer_ticks_missed;
  MetricFamily& analyzer_exchange_errors;
  MetricFamily& analyzer_io_uring_refused;
  MetricFamily& peers_configured;
  MetricFamily& datagrams_received;
  MetricFamily& datagrams_accepted;
  MetricFamily& datagrams_rejected;
  MetricFamily& datagrams_rejected_by_class;
  MetricFamily& datagram_receive_errors;
  MetricFamily& replay_senders_forgotten;
  MetricFamily& summaries_sent;
  MetricFamily& send_errors;
  MetricFamily& peer_summaries_accepted;
  MetricFamily& peer_last_heard;
  MetricFamily& alarms_raised;
  MetricFamily& alarms;
  MetricFamily& alarm_open;
  MetricFamily& alarm_agreeing;
  MetricFamily& alarm_analyzers;
  MetricFamily& score;
  MetricFamily& score_threshold;
  MetricFamily& score_ratio;
  MetricFamily& score_over_threshold;
  MetricFamily& score_window_time;
  MetricFamily& alarm_score;
  MetricFamily& alarm_threshold;
  MetricFamily& alarm_last_time;
  MetricFamily& serve_segments;
};

Families::Families(Exposition* page)
    : server_info(page->Declare("limpwatch_server_info", MetricType::kGauge,
                                "A traced server's segment: always 1; its object, program, pid and layout version.",
                                {"server", "object", "program", "pid", "segment_version"})),
      start_time(page->Declare("limpwatch_server_start_time_seconds", MetricType::kGauge,
                               "When the server's segment was created (unix seconds): its counters start from 0 then.",
                               {"server"})),
      snapshot_consistent(page->Declare("limpwatch_snapshot_consistent", MetricType::kGauge,
                                        "1 when this scrape read a consistent snapshot; 0 when threads kept retiring "
                                        "and the previous consistent one is shown.",
                                        {"server"})),
      traced_calls(page->Declare("limpwatch_traced_calls_total", MetricType::kCounter,
                                 "Calls of traced functions, every thread, live and exited.", {"server"})),
      untracked_calls(page->Declare("limpwatch_untracked_calls_total", MetricType::kCounter,
                                    "Calls of functions the function table had no room for.", {"server"})),
      overflowed_calls(page->Declare("limpwatch_overflowed_calls_total", MetricType::kCounter,
                                     "Calls deeper than the shadow stack: counted, not timed.", {"server"})),
      resynced_frames(page->Declare("limpwatch_resynced_frames_total", MetricType::kCounter,
                                    "Frames closed without their exit (longjmp, unwinding).", {"server"})),
      unmatched_exits(page->Declare("limpwatch_unmatched_exits_total", MetricType::kCounter,
                                    "Function exits without a matching entry, ignored.", {"server"})),
      calls_without_slot(page->Declare("limpwatch_calls_without_slot_total", MetricType::kCounter,
                                       "Calls of threads that found no free thread slot, not recorded.", {"server"})),
      threads_without_slot(page->Declare("limpwatch_threads_without_slot_total", MetricType::kCounter,
                                         "Threads that found no free thread slot: their I/O goes to the process "
                                         "totals, their calls are not recorded.",
                                         {"server"})),
      calls_during_hooks_lost(page->Declare(
          "limpwatch_calls_during_hooks_lost_total", MetricType::kCounter,
          "Traced calls of signal handlers that interrupted limpwatch's own hooks before their function was "
          "registered: not counted.",
          {"server"})),
      functions_traced(page->Declare("limpwatch_functions_called", MetricType::kGauge,
                                     "Functions called at least once; the function series show the top ones only.",
                                     {"server"})),
      function_calls(page->Declare("limpwatch_function_calls_total", MetricType::kCounter,
                                   "Calls of one of the server's top functions by self time.", {"server", "function"})),
      function_self(page->Declare("limpwatch_function_self_seconds_total", MetricType::kCounter,
                                  "Self time of one of the server's top functions (children's time subtracted, time "
                                  "blocked in system calls kept).",
                                  {"server", "function"})),
      io_calls(page->Declare("limpwatch_io_calls_total", MetricType::kCounter, "I/O calls by fd kind and operation.",
                             {"server", "fd_kind", "operation"})),
      io_bytes(page->Declare("limpwatch_io_bytes_total", MetricType::kCounter,
                             "Bytes read or written by fd kind and operation.", {"server", "fd_kind", "operation"})),
      io_seconds(page->Declare("limpwatch_io_seconds_total", MetricType::kCounter,
                               "Service time of the I/O calls by fd kind and operation.",
                               {"server", "fd_kind", "operation"})),
      io_errors(page->Declare("limpwatch_io_errors_total", MetricType::kCounter,
                              "I/O calls that failed, by fd kind and operation.", {"server", "fd_kind", "operation"})),
      io_errno(page->Declare("limpwatch_io_errno_total", MetricType::kCounter,
                             "Failed I/O calls by fd kind, operation and errno.",
                             {"server", "fd_kind", "operation", "errno"})),
      io_errno_unslotted(page->Declare("limpwatch_io_errno_unslotted_total", MetricType::kCounter,
                                       "Failed I/O calls whose errno found no slot (counted in "
                                       "limpwatch_io_errors_total only).",
                                       {"server"})),
      service_calls(page->Declare("limpwatch_service_calls_total", MetricType::kCounter,
                                  "Calls behind each of seed 001's service times: dread, dwrite, dsync (storage), "
                                  "nsread (requests read), ncread (responses read).",
                                  {"server", "metric"})),
      service_seconds(page->Declare("limpwatch_service_time_seconds_total", MetricType::kCounter,
                                    "Summed service time of seed 001's metrics; divide its rate by "
                                    "limpwatch_service_calls_total's for the time per call.",
                                    {"server", "metric"})),
      cpu_samples(page->Declare("limpwatch_cpu_samples_total", MetricType::kCounter,
                                "CPU samples taken of the server's threads.", {"server"})),
      cpu_samples_lost(page->Declare("limpwatch_cpu_samples_lost_total", MetricType::kCounter,
                                     "CPU samples dropped by the kernel or for want of room.", {"server"})),
      cpu_samples_unknown(page->Declare("limpwatch_cpu_samples_unknown_total", MetricType::kCounter,
                                        "CPU samples no symbol covered.", {"server"})),
      process_cpu(page->Declare("limpwatch_process_cpu_seconds_total", MetricType::kCounter,
                                "CPU time of the traced process, at the analyzer's last node sample.", {"server"})),
      cpu_wait(page->Declare("limpwatch_cpu_wait_seconds_total", MetricType::kCounter,
                             "Time the process's threads waited for a CPU while runnable.", {"server"})),
      heap_bytes(page->Declare("limpwatch_heap_bytes", MetricType::kGauge, "What malloc holds from the system.",
                               {"server"})),
      major_faults(page->Declare("limpwatch_major_page_faults_total", MetricType::kCounter,
                                 "Page faults of the process that read from storage.", {"server"})),
      tcp_retransmitted(page->Declare("limpwatch_tcp_retransmitted_segments_total", MetricType::kCounter,
                                      "TCP segments the connections the server serves retransmitted.", {"server"})),
      analyzer_ticks(page->Declare("limpwatch_analyzer_ticks_total", MetricType::kCounter,
                                   "Ticks the in-process analyzer ran (one a second): a rate of 0 means it went "
                                   "silent.",
                                   {"server"})),
      analyzer_tick_failures(page->Declare("limpwatch_analyzer_tick_failures_total", MetricType::kCounter,
                                           "Analyzer ticks that failed and were skipped.", {"server"})),
      analyzer_windows(page->Declare("limpwatch_analyzer_windows_total", MetricType::kCounter,
                                     "Windows in which the analyzer compared the cluster.", {"server"})),
      analyzer_summaries_unsent(page->Declare("limpwatch_analyzer_summaries_unsent_total", MetricType::kCounter,
                                              "This server's summaries the encoder refused.", {"server"})),
      analyzer_recording_lost(page->Declare("limpwatch_analyzer_recording_failed_writes_total", MetricType::kCounter,
                                            "Writes of the recording (LIMPWATCH_RECORD) that failed.", {"server"})),
      analyzer_alarms_file_lost(page->Declare("limpwatch_analyzer_alarms_failed_writes_total", MetricType::kCounter,
                                              "Appends to the alarms file (LIMPWATCH_ALARMS) that failed.",
                                              {"server"})),
      analyzer_summaries_late(page->Declare("limpwatch_analyzer_summaries_late_total", MetricType::kCounter,
                                            "Peers' summaries that arrived after their window was compared: not "
                                            "compared.",
                                            {"server"})),
      analyzer_ticks_missed(page->Declare("limpwatch_analyzer_ticks_missed_total", MetricType::kCounter,
                                          "Tick boundaries that passed while a tick still ran: windows not looked "
                                          "at.",
                                          {"server"})),
      analyzer_exchange_errors(page->Declare("limpwatch_analyzer_exchange_errors_total", MetricType::kCounter,
                                             "Errors stopped at the peer exchange's boundary (the exchange goes "
                                             "on).",
                                             {"server"})),
      analyzer_io_uring_refused(page->Declare("limpwatch_analyzer_io_uring_refused", MetricType::kGauge,
                                              "1 when the kernel refused io_uring to that part of the analyzer "
                                              "(exchange, recording, alarms_file), which then uses plain calls.",
                                              {"server", "ring"})),
      peers_configured(page->Declare("limpwatch_peers_configured", MetricType::kGauge,
                                     "Peers the server's analyzer exchanges summaries with.", {"server"})),
      datagrams_received(page->Declare("limpwatch_peer_datagrams_received_total", MetricType::kCounter,
                                       "Datagrams the peer exchange received.", {"server"})),
      datagrams_accepted(page->Declare("limpwatch_peer_datagrams_accepted_total", MetricType::kCounter,
                                       "Datagrams the peer exchange accepted as a peer's summary.", {"server"})),
      datagrams_rejected(page->Declare("limpwatch_peer_datagrams_rejected_total", MetricType::kCounter,
                                       "Datagrams the peer exchange rejected, every class of rejection together.",
                                       {"server"})),
      datagrams_rejected_by_class(page->Declare(
          "limpwatch_peer_datagrams_rejected_by_class_total", MetricType::kCounter,
          "Datagrams the peer exchange rejected, by class (truncated, bad_magic, replayed, unknown_sender, ...; "
          "all 0 from a server older than segment layout 1.10, which counts only the total).",
          {"server", "class"})),
      datagram_receive_errors(page->Declare("limpwatch_peer_receive_errors_total", MetricType::kCounter,
                                            "Receives of the peer socket (or its ring) that failed.", {"server"})),
      replay_senders_forgotten(page->Declare(
          "limpwatch_peer_replay_senders_forgotten_total", MetricType::kCounter,
          "Senders the full replay table forgot (their next datagram is checked as a new sender's).", {"server"})),
      summaries_sent(page->Declare("limpwatch_peer_summaries_sent_total", MetricType::kCounter,
                                   "Summaries the server sent its peers.", {"server"})),
      send_errors(page->Declare("limpwatch_peer_send_errors_total", MetricType::kCounter,
                                "Datagrams to peers refused or not queued.", {"server"})),
      peer_summaries_accepted(page->Declare("limpwatch_peer_summaries_accepted_total", MetricType::kCounter,
                                            "Summaries accepted from one peer (the first 20 peers listed).",
                                            {"server", "peer"})),
      peer_last_heard(page->Declare("limpwatch_peer_last_heard_seconds", MetricType::kGauge,
                                    "When the server last accepted a summary of that peer (unix seconds).",
                                    {"server", "peer"})),
      alarms_raised(page->Declare("limpwatch_alarms_raised_total", MetricType::kCounter,
                                  "Every alarm the reporter's analyzer published, whatever its labels.", {"reporter"})),
      alarms(page->Declare("limpwatch_alarms_total", MetricType::kCounter,
                           "Alarms raised by the reporter's analyzer against a server, by resource and kind.",
                           {"reporter", "server", "resource", "kind"})),
      alarm_open(page->Declare("limpwatch_alarm_open", MetricType::kGauge,
                               "1 while the newest alarm of these labels is recent (see --open-seconds), else 0.",
                               {"reporter", "server", "resource", "kind"})),
      alarm_agreeing(page->Declare("limpwatch_alarm_agreeing", MetricType::kGauge,
                                   "How many analyzers of the cluster hold the newest alarm of these labels open, "
                                   "the reporter included, as the reporter last heard (absent before layout 1.12).",
                                   {"reporter", "server", "resource", "kind"})),
      alarm_analyzers(page->Declare("limpwatch_alarm_analyzers", MetricType::kGauge,
                                    "Of how many analyzers the reporter had word when it last counted them (its "
                                    "peers not silent that send their verdicts, and itself).",
                                    {"reporter", "server", "resource", "kind"})),
      score(page->Declare("limpwatch_score", MetricType::kGauge,
                          "The analyzer's score of the server for one compared metric, in the newest window it "
                          "compared (calibrated rule: evidence in nats; seed rule: distance to the peers).",
                          {"server", "metric"})),
      score_threshold(page->Declare("limpwatch_score_threshold", MetricType::kGauge,
                                    "The threshold that score is held to: above it, the window counts against the "
                                    "server.",
                                    {"server", "metric"})),
      score_ratio(page->Declare("limpwatch_score_ratio_to_peers", MetricType::kGauge,
                                "The server's value of the metric over its peers' median in that window (0 where "
                                "the rule gives none).",
                                {"server", "metric"})),
      score_over_threshold(page->Declare("limpwatch_score_over_threshold", MetricType::kGauge,
                                         "1 when the score was over its threshold in that window (never while the "
                                         "server warms up).",
                                         {"server", "metric"})),
      score_window_time(page->Declare("limpwatch_score_updated_time_seconds", MetricType::kGauge,
                                      "When the analyzer compared the window the scores are of (unix seconds).",
                                      {"server"})),
      alarm_score(page->Declare("limpwatch_alarm_score", MetricType::kGauge,
                                "The score of the newest alarm of these labels (of its strongest metric).",
                                {"reporter", "server", "resource", "kind"})),
      alarm_threshold(page->Declare("limpwatch_alarm_threshold", MetricType::kGauge,
                                    "The threshold its score was compared with.",
                                    {"reporter", "server", "resource", "kind"})),
      alarm_last_time(page->Declare("limpwatch_alarm_last_time_seconds", MetricType::kGauge,
                                    "The end of the window that raised the newest alarm of these labels (unix "
                                    "seconds).",
                                    {"reporter", "server", "resource", "kind"})),
      serve_segments(page->Declare("limpwatch_serve_segments", MetricType::kGauge,
                                   "Segments listed on this node at this scrape: served, not live, owned by another "
                                   "user (not served), or unreadable.",
                                   {"state"})) {}

struct ServedFunction {
  const shm::FunctionRecord* record;
  std::string label;
};

// The `limit` functions with the most self time. Labels are the function
// names; a name two functions share (static functions of two files, a
// truncated template) gets the hash of its symbol, which stays the same
// across restarts, or its id when the symbols are the same too.
std::vector<ServedFunction> TopFunctions(const shm::Snapshot& snapshot, size_t limit) {
  std::map<std::string_view, int> names;
  std::map<std::pair<std::string_view, uint64_t>, int> symbols;
  std::vector<const shm::FunctionRecord*> called;
  for (const shm::FunctionRecord& function : snapshot.functions) {
    if (function.state == shm::SymbolState::kEmpty) continue;
    ++names[function.name];
    ++symbols[{function.name, function.name_hash}];
    if (function.counters.calls != 0) called.push_back(&function);
  }
  auto more_self = [](const shm::FunctionRecord* a, const shm::FunctionRecord* b) {
    if (a->counters.self_ticks != b->counters.self_ticks) return a->counters.self_ticks > b->counters.self_ticks;
    if (a->counters.calls != b->counters.calls) return a->counters.calls > b->counters.calls;
    if (a->name != b->name) return a->name < b->name;
    return a->id < b->id;
  };
  size_t kept = std::min(limit, called.size());
  std::partial_sort(called.begin(), called.begin() + static_cast<std::ptrdiff_t>(kept), called.end(), more_self);
  std::vector<ServedFunction> top;
  for (size_t index = 0; index < kept; ++index) {
    const shm::FunctionRecord* function = called[index];
    std::string label = function->name;
    if (names[function->name] > 1) {
      bool hash_tells = function->name_hash != 0 && symbols[{function->name, function->name_hash}] == 1;
      label += hash_tells ? " #" + FormatHex16(function->name_hash) : " #" + std::to_string(function->id);
    }
    top.push_back({function, std::move(label)});
  }
  return top;
}

void AddIdentity(Families& f, const ServedSegment& segment) {
  const shm::Snapshot& s = *segment.snapshot;
  f.server_info.Add({segment.server, segment.object_name, s.program, std::to_string(s.pid),
                     std::to_string(s.version_major) + "." + std::to_string(s.version_minor)},
                    uint64_t{1});
  f.start_time.Add({segment.server}, double(segment.created_realtime_ns) / 1e9);
  f.snapshot_consistent.Add({segment.server}, uint64_t{segment.snapshot_consistent ? 1u : 0u});
}

void AddCalls(Families& f, const ServedSegment& segment, size_t top_functions) {
  const shm::Snapshot& s = *segment.snapshot;
  const Labels server{segment.server};
  uint64_t calls = 0;
  uint64_t called = 0;
  for (const shm::FunctionRecord& function : s.functions) {
    calls += function.counters.calls;
    called += function.counters.calls != 0 ? 1 : 0;
  }
  f.traced_calls.Add(server, calls);
  f.untracked_calls.Add(server, s.diagnostics.untracked_calls);
  f.overflowed_calls.Add(server, s.diagnostics.overflowed_calls);
  f.resynced_frames.Add(server, s.diagnostics.resynced_frames);
  f.unmatched_exits.Add(server, s.diagnostics.unmatched_exits);
  f.calls_without_slot.Add(server, s.calls_without_slot);
  f.threads_without_slot.Add(server, s.threads_without_slot);
  f.calls_during_hooks_lost.Add(server, s.calls_during_hooks_lost);
  f.functions_traced.Add(server, called);
  for (const ServedFunction& function : TopFunctions(s, top_functions)) {
    f.function_calls.Add({segment.server, function.label}, function.record->counters.calls);
    f.function_self.Add({segment.server, function.label}, Seconds(s, function.record->counters.self_ticks));
  }
}

void AddIo(Families& f, const ServedSegment& segment) {
  const shm::Snapshot& s = *segment.snapshot;
  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      const shm::IoValues& values = s.io.counters[kind][operation];
      // Once a call was made its series stays: counters never fall back to 0.
      if (values.calls == 0) continue;
      Labels labels{segment.server, analyzer::FdKindName(static_cast<shm::FdKind>(kind)),
                    analyzer::IoOperationName(static_cast<shm::IoOperation>(operation))};
      f.io_calls.Add(labels, values.calls);
      f.io_bytes.Add(labels, values.bytes);
      f.io_seconds.Add(labels, Seconds(s, values.ticks));
      f.io_errors.Add(labels, values.errors);
    }
  }
  for (const shm::ErrnoRecord& record : s.io.errnos) {
    f.io_errno.Add({segment.server, analyzer::FdKindName(record.kind), analyzer::IoOperationName(record.operation),
                    analyzer::ErrnoName(record.error)},
                   record.count);
  }
  f.io_errno_unslotted.Add({segment.server}, s.io.errno_overflow);
  // Seed 001's metrics over the whole life of the segment, as `dump` gives them.
  analyzer::IoMetrics totals = analyzer::DeriveIoMetrics(shm::Snapshot{}, s);
  for (auto [name, time] : {std::pair{"dread", &totals.dread}, std::pair{"dwrite", &totals.dwrite},
                            std::pair{"dsync", &totals.dsync}, std::pair{"nsread", &totals.nsread},
                            std::pair{"ncread", &totals.ncread}}) {
    f.service_calls.Add({segment.server, name}, time->calls);
    f.service_seconds.Add({segment.server, name}, time->total_ms / 1e3);
  }
}

void AddSamplesAndNode(Families& f, const ServedSegment& segment) {
  const shm::Snapshot& s = *segment.snapshot;
  const Labels server{segment.server};
  if (s.samples.source != static_cast<uint32_t>(shm::SampleSource::kOff) || s.samples.samples_total != 0) {
    f.cpu_samples.Add(server, s.samples.samples_total);
    f.cpu_samples_lost.Add(server, s.samples.samples_lost);
    f.cpu_samples_unknown.Add(server, s.samples.samples_unknown);
  }
  const shm::NodeMetricsValues& node = s.node_metrics;
  if (!node.valid) return;
  f.process_cpu.Add(server, double(node.process_cpu_ns) / 1e9);
  f.cpu_wait.Add(server, double(node.run_delay_ns) / 1e9);
  f.heap_bytes.Add(server, node.heap_bytes);
  f.major_faults.Add(server, node.major_faults);
  f.tcp_retransmitted.Add(server, node.tcp_retransmitted);
}

void AddAnalyzerAndPeers(Families& f, const ServedSegment& segment) {
  const shm::Snapshot& s = *segment.snapshot;
  const Labels server{segment.server};
  const shm::AnalyzerHealthValues& health = s.analyzer_health;
  if (health.valid) {
    f.analyzer_ticks.Add(server, health.ticks);
    f.analyzer_tick_failures.Add(server, health.tick_failures);
    f.analyzer_windows.Add(server, health.windows_analyzed);
    f.analyzer_summaries_unsent.Add(server, health.summaries_unsent);
    f.analyzer_recording_lost.Add(server, health.recording_failed_writes);
    f.analyzer_alarms_file_lost.Add(server, health.alarms_failed_writes);
    const shm::AnalyzerSheddingValues& shedding = s.analyzer_shedding;
    f.analyzer_summaries_late.Add(server, shedding.summaries_late);
    f.analyzer_ticks_missed.Add(server, shedding.ticks_missed);
    f.analyzer_exchange_errors.Add(server, shedding.exchange_internal_errors);
    for (auto [bit, ring] : {std::pair{shm::kRingOfExchange, "exchange"}, std::pair{shm::kRingOfRecording, "recording"},
                             std::pair{shm::kRingOfAlarmsFile, "alarms_file"}}) {
      f.analyzer_io_uring_refused.Add({segment.server, ring}, uint64_t{(shedding.io_uring_refused & bit) != 0});
    }
  }
  const shm::PeerStatusValues& peers = s.peer_status;
  if (!peers.valid) return;
  f.peers_configured.Add(server, uint64_t{peers.peers_configured});
  f.datagrams_received.Add(server, peers.datagrams_received);
  f.datagrams_accepted.Add(server, peers.datagrams_accepted);
  f.datagrams_rejected.Add(server, peers.datagrams_rejected);
  // Slot 0 is "accepted"; a class a newer writer added is named by its slot.
  const shm::AnalyzerSheddingValues& shedding = s.analyzer_shedding;
  for (uint32_t index = 1; index < shm::kPeerRejectionClasses; ++index) {
    bool known = index < analyzer::kDecodeErrorCount;
    if (!known && shedding.datagrams_rejected[index] == 0) continue;
    std::string name = known ? analyzer::DecodeErrorName(static_cast<analyzer::DecodeError>(index))
                             : "class " + std::to_string(index);
    f.datagrams_rejected_by_class.Add({segment.server, name}, shedding.datagrams_rejected[index]);
  }
  f.datagram_receive_errors.Add(server, shedding.datagram_receive_errors);
  f.replay_senders_forgotten.Add(server, shedding.replay_senders_forgotten);
  f.summaries_sent.Add(server, peers.summaries_sent);
  f.send_errors.Add(server, peers.send_errors);
  for (const shm::PeerStatusRow& peer : peers.peers) {
    f.peer_summaries_accepted.Add({segment.server, peer.name}, peer.accepted);
    if (peer.heard) f.peer_last_heard.Add({segment.server, peer.name}, double(peer.last_heard_unix_ms) / 1e3);
  }
}

void AddScores(Families& f, const ServedSegment& segment) {
  const shm::ScoreStatusValues& scores = segment.snapshot->score_status;
  if (!scores.valid) return;
  f.score_window_time.Add({segment.server}, double(scores.updated_unix_ms) / 1e3);
  for (const shm::ScoreRow& row : scores.scores) {
    Labels labels{segment.server, row.metric};
    f.score.Add(labels, row.score);
    f.score_threshold.Add(labels, row.threshold);
    f.score_ratio.Add(labels, row.ratio);
    f.score_over_threshold.Add(labels, uint64_t{row.anomalous ? 1u : 0u});
  }
}

void AddAlarms(Families& f, const ServedSegment& segment, uint64_t now_ns, double open_seconds) {
  f.alarms_raised.Add({segment.server}, segment.alarms.raised());
  for (const auto& [labels, series] : segment.alarms.series()) {
    Labels values{segment.server, labels.server, labels.resource, labels.kind};
    bool open = IsOpen(series, now_ns, open_seconds);
    f.alarms.Add(values, series.count);
    f.alarm_open.Add(values, uint64_t{open ? 1u : 0u});
    if (series.analyzers > 0) {
      f.alarm_agreeing.Add(values, uint64_t{series.agreeing});
      f.alarm_analyzers.Add(values, uint64_t{series.analyzers});
    }
    f.alarm_score.Add(values, series.score);
    f.alarm_threshold.Add(values, series.threshold);
    f.alarm_last_time.Add(values, double(series.last_time_ns) / 1e9);
  }
}

}  // namespace

std::string RenderMetrics(const Collection& collection, const ExpositionSettings& settings) {
  Exposition page;
  Families families(&page);
  for (const ServedSegment& segment : collection.segments) {
    AddIdentity(families, segment);
    AddCalls(families, segment, settings.top_functions);
    AddIo(families, segment);
    AddSamplesAndNode(families, segment);
    AddAnalyzerAndPeers(families, segment);
    AddScores(families, segment);
    AddAlarms(families, segment, collection.taken_realtime_ns, settings.open_alarm_seconds);
  }
  const SegmentCensus& census = collection.census;
  for (auto [state, count] : {std::pair{"served", census.served}, std::pair{"not_live", census.not_live},
                              std::pair{"other_user", census.other_user}, std::pair{"unreadable", census.unreadable}}) {
    families.serve_segments.Add({state}, count);
  }
  return page.Render();
}

}  // namespace limpwatch::cli::serve
