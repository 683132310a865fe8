#include "soak_verdict.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include "limpwatch/analyzer/peer_wire.h"
#include "soak_protocol.h"

namespace limpwatch::soak {
namespace {

struct Check {
  std::string property;
  bool held;
  std::string detail;
};

std::string Number(uint64_t value) {
  std::string digits = std::to_string(value);
  for (int at = int(digits.size()) - 3; at > 0; at -= 3) digits.insert(size_t(at), ",");
  return digits;
}

std::string Fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

uint64_t TallyOf(const SoakFigures& figures, const std::string& key) {
  auto found = figures.server_tally.find(key);
  return found == figures.server_tally.end() ? 0 : found->second;
}

uint64_t SegmentCalls(const shm::Snapshot& snapshot, const std::string& name) {
  uint64_t calls = 0;
  for (const shm::FunctionRecord& function : snapshot.functions) {
    if (function.name == name) calls += function.counters.calls;
  }
  return calls;
}

shm::FdKind KindOf(size_t counted) {
  switch (static_cast<CountedKind>(counted)) {
    case CountedKind::kTcp: return shm::FdKind::kTcp;
    case CountedKind::kUnix: return shm::FdKind::kUnix;
    case CountedKind::kFile: return shm::FdKind::kFile;
    case CountedKind::kPipe: return shm::FdKind::kPipe;
  }
  return shm::FdKind::kOther;
}

class Table {
 public:
  void Row(const std::string& figure, const std::string& value, const std::string& note = "") {
    rows_.push_back({figure, value, note});
  }
  void Print() const {
    size_t width = 0, value_width = 0;
    for (const auto& row : rows_) {
      width = std::max(width, row[0].size());
      value_width = std::max(value_width, row[1].size());
    }
    for (const auto& row : rows_) {
      std::printf("  %-*s  %*s  %s\n", int(width), row[0].c_str(), int(value_width), row[1].c_str(), row[2].c_str());
    }
  }

 private:
  std::vector<std::array<std::string, 3>> rows_;
};

}  // namespace

std::map<std::string, uint64_t> ParseServerTally(const std::string& text) {
  std::map<std::string, uint64_t> tally;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    tally[line.substr(0, space)] = std::strtoull(line.c_str() + space + 1, nullptr, 10);
  }
  return tally;
}

void CountAlarmLines(const std::string& path, uint64_t* lines, uint64_t* torn) {
  *lines = *torn = 0;
  std::ifstream file(path, std::ios::binary);
  std::string content((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    std::string line = content.substr(start, end == std::string::npos ? std::string::npos : end - start);
    bool complete = end != std::string::npos;
    bool object = line.size() >= 2 && line.front() == '{' && line.back() == '}' &&
                  line.find("\"server\"") != std::string::npos && line.find('\0') == std::string::npos;
    ++(complete && object ? *lines : *torn);
    if (!complete) break;
    start = end + 1;
  }
}

bool ReportVerdict(const SoakFigures& figures) {
  const LoadTally& load = *figures.load;
  const shm::Snapshot& segment = figures.snapshot;
  std::vector<Check> checks;
  Table table;

  // ---- Requests ----
  uint64_t requests = 0, answered = 0, refused = 0;
  for (size_t slot = 0; slot < kRequestTypeSlots; ++slot) {
    requests += load.requests[slot];
    answered += load.answered[slot];
    refused += load.refused[slot];
  }
  table.Row("requests made / answered", Number(requests) + " / " + Number(answered),
            Number(load.connections) + " connections, " + Number(refused) + " refused");
  std::string first_failure;
  {
    std::lock_guard lock(const_cast<LoadTally&>(load).mutex);
    first_failure = load.first_failure;
  }
  checks.push_back({"the server answered every request", requests == answered && load.failures == 0 && refused == 0,
                    Number(load.failures) + " unanswered, " + Number(refused) + " refused" +
                        (first_failure.empty() ? "" : "; first: " + first_failure)});
  checks.push_back({"the server stopped on SIGTERM and wrote its tally", figures.server_stopped_cleanly &&
                                                                            !figures.server_tally.empty(),
                    ""});
  checks.push_back({"its segment could be read after it exited", figures.snapshot_taken && segment.consistent, ""});

  // ---- Calls ----
  bool calls_exact = true;
  std::string calls_detail;
  for (const char* name : kKnownFunctionNames) {
    uint64_t made = TallyOf(figures, std::string("calls ") + name);
    uint64_t counted = SegmentCalls(segment, name);
    if (made != counted) {
      calls_exact = false;
      calls_detail += std::string(calls_detail.empty() ? "" : "; ") + name + ": made " + Number(made) +
                      ", counted " + Number(counted);
    }
    table.Row(std::string("calls of ") + name, Number(counted) + " / " + Number(made), "counted / made");
  }
  checks.push_back({"calls counted = calls made, for every known function", calls_exact, calls_detail});
  auto answered_of = [&](RequestType type) { return uint64_t(load.answered[size_t(type)]); };
  bool handlers_match =
      TallyOf(figures, "calls soak_handle_echo") == answered_of(RequestType::kEcho) &&
      TallyOf(figures, "calls soak_handle_store") == answered_of(RequestType::kStore) &&
      TallyOf(figures, "calls soak_handle_load") == answered_of(RequestType::kLoad) &&
      TallyOf(figures, "calls soak_handle_sync") == answered_of(RequestType::kSync) &&
      TallyOf(figures, "calls soak_handle_threads") == answered_of(RequestType::kThreads) &&
      TallyOf(figures, "calls soak_handle_fork_exec") == answered_of(RequestType::kForkExec) &&
      TallyOf(figures, "calls soak_thread_work") == load.thread_calls_asked;
  checks.push_back({"the server's handler calls = the requests the client made", handlers_match,
                    "short-thread calls asked " + Number(load.thread_calls_asked)});
  checks.push_back({"no call of a forked child counted in the server (soak_child_work)",
                    SegmentCalls(segment, "soak_child_work") == 0 &&
                        segment.forks_followed == TallyOf(figures, "event forks"),
                    Number(segment.forks_followed) + " forks followed, " +
                        Number(TallyOf(figures, "event forks")) + " forked"});
  table.Row("short threads run", Number(TallyOf(figures, "event threads_started")),
            Number(segment.retired_threads) + " threads retired in the segment");
  table.Row("children forked (then exec)", Number(TallyOf(figures, "event forks")),
            "their segments in /dev/shm: " + Number(figures.children_segments_stale) + " stale, " +
                Number(figures.children_segments_kept) + " kept (LIMPWATCH_KEEP=1)");
  table.Row("signals handled", Number(TallyOf(figures, "event signals_handled")),
            Number(figures.faults.signals_to_process) + " sent to the process, " +
                Number(figures.faults.signals_to_threads) + " to its threads");

  // ---- Bytes and I/O calls ----
  bool bytes_exact = true;
  std::string bytes_detail;
  auto compare = [&](const std::string& what, uint64_t counted, uint64_t moved) {
    if (counted != moved) {
      bytes_exact = false;
      bytes_detail += (bytes_detail.empty() ? "" : "; ") + what + ": counted " + Number(counted) + ", moved " +
                      Number(moved);
    }
  };
  const shm::IoSnapshot& io = segment.io;
  for (size_t kind = 0; kind < kCountedKindCount; ++kind) {
    for (size_t op = 0; op < kCountedOpCount; ++op) {
      std::string key = std::string("io ") + kCountedKindNames[kind] + " " + kCountedOpNames[op];
      const shm::IoValues& counted =
          io.at(KindOf(kind), op == 0 ? shm::IoOperation::kRead : shm::IoOperation::kWrite);
      compare(key + " calls", counted.calls, TallyOf(figures, key + " calls"));
      compare(key + " bytes", counted.bytes, TallyOf(figures, key + " bytes"));
      table.Row(key + " bytes", Number(counted.bytes) + " / " + Number(TallyOf(figures, key + " bytes")),
                "counted / moved; calls " + Number(counted.calls) + " / " + Number(TallyOf(figures, key + " calls")));
    }
  }
  // The client's side of the same sockets, and of the storage.
  compare("tcp bytes the clients sent", io.at(shm::FdKind::kTcp, shm::IoOperation::kRead).bytes,
          load.bytes_sent[size_t(Transport::kTcp)]);
  compare("tcp bytes the clients received", io.at(shm::FdKind::kTcp, shm::IoOperation::kWrite).bytes,
          load.bytes_received[size_t(Transport::kTcp)]);
  compare("unix bytes the clients sent", io.at(shm::FdKind::kUnix, shm::IoOperation::kRead).bytes,
          load.bytes_sent[size_t(Transport::kUnix)]);
  compare("unix bytes the clients received", io.at(shm::FdKind::kUnix, shm::IoOperation::kWrite).bytes,
          load.bytes_received[size_t(Transport::kUnix)]);
  compare("file bytes stored", io.at(shm::FdKind::kFile, shm::IoOperation::kWrite).bytes, load.stored_bytes);
  compare("file bytes loaded", io.at(shm::FdKind::kFile, shm::IoOperation::kRead).bytes, load.loaded_bytes);
  compare("file syncs", io.at(shm::FdKind::kFile, shm::IoOperation::kSync).calls,
          TallyOf(figures, "event file_syncs"));
  uint64_t udp_calls = 0;
  for (const shm::IoValues& udp : io.counters[uint32_t(shm::FdKind::kUdp)]) udp_calls += udp.calls;
  compare("udp calls (the analyzer's own are not the server's)", udp_calls, 0);
  checks.push_back({"bytes counted = bytes moved, and I/O calls = calls made, per fd kind", bytes_exact,
                    bytes_detail});

  // ---- Resources ----
  Trend rss = FitTrend(figures.resources, figures.warm_up_seconds, &ResourceSample::rss_kib);
  Trend fds = FitTrend(figures.resources, figures.warm_up_seconds, &ResourceSample::fds);
  Trend threads = FitTrend(figures.resources, figures.warm_up_seconds, &ResourceSample::threads);
  double measured_hours = (figures.run_seconds - figures.warm_up_seconds) / 3600.0;
  table.Row("RSS slope after warm-up", Fixed(rss.slope_per_hour / 1024.0, 2) + " MiB/h",
            "fit " + Fixed(rss.first / 1024.0, 1) + " -> " + Fixed(rss.last / 1024.0, 1) + " MiB, seen " +
                Fixed(rss.low / 1024.0, 1) + "-" + Fixed(rss.high / 1024.0, 1) + " MiB, " + Number(rss.samples) +
                " samples");
  table.Row("fd slope after warm-up", Fixed(fds.slope_per_hour, 2) + " fds/h",
            "fit " + Fixed(fds.first, 1) + " -> " + Fixed(fds.last, 1) + ", seen " + Fixed(fds.low, 0) + "-" +
                Fixed(fds.high, 0) + "; with no load " + Number(figures.quiet_fds_before) + " at start, " +
                Number(figures.quiet_fds_after) + " at the end");
  table.Row("thread slope after warm-up", Fixed(threads.slope_per_hour, 2) + " threads/h",
            "seen " + Fixed(threads.low, 0) + "-" + Fixed(threads.high, 0));
  // Flat: what the fit grows over the measured span stays within noise: 4 MiB
  // or 5 % of the RSS, and 4 descriptors (the alarms file and its ring,
  // opened at the first alarm once its disk is writable, are a step of 2,
  // which a line fits with a growth of up to 3); with no load, the
  // descriptors at the end are those at the start, but for those two.
  double rss_growth_kib = rss.slope_per_hour * measured_hours;
  checks.push_back({"RSS flat after warm-up", rss.samples >= 2 && rss_growth_kib <= std::max(4096.0, 0.05 * rss.first),
                    "grew " + Fixed(rss_growth_kib / 1024.0, 2) + " MiB over " + Fixed(measured_hours * 60, 1) +
                        " min"});
  checks.push_back({"descriptors flat after warm-up",
                    fds.samples >= 2 && fds.slope_per_hour * measured_hours <= 4.0 &&
                        figures.quiet_fds_after <= figures.quiet_fds_before + 2,
                    "fit grew " + Fixed(fds.slope_per_hour * measured_hours, 2) + "; " +
                        Number(figures.quiet_fds_before) + " -> " + Number(figures.quiet_fds_after) + " with no load"});

  // ---- limpwatch's threads ----
  auto count_named = [](const std::vector<std::string>& names, const std::string& name) {
    return uint64_t(std::count(names.begin(), names.end(), name));
  };
  bool threads_alive = true;
  std::string lost;
  for (const char* name : {"limpwatch", "limpwatch-anlz", "limpwatch-samp"}) {
    if (count_named(figures.threads_at_start, name) > count_named(figures.threads_at_end, name)) {
      threads_alive = false;
      lost += std::string(lost.empty() ? "" : ", ") + name;
    }
  }
  std::string alive;
  for (const std::string& name : figures.threads_at_end) alive += (alive.empty() ? "" : ", ") + name;
  table.Row("limpwatch threads alive at the end", Number(figures.threads_at_end.size()), alive);
  const shm::AnalyzerHealthValues& health = segment.analyzer_health;
  checks.push_back({"no limpwatch thread died, the analyzer kept ticking",
                    threads_alive && !figures.threads_at_end.empty() && figures.ticks_in_last_seconds >= 2 &&
                        health.tick_failures == 0,
                    (lost.empty() ? "" : "gone: " + lost + "; ") + Number(figures.ticks_in_last_seconds) +
                        " ticks in the last 3 s, " + Number(health.tick_failures) + " failed ticks"});

  // ---- Refused inputs ----
  const shm::AnalyzerSheddingValues& shed = segment.analyzer_shedding;
  const shm::PeerStatusValues& peers = segment.peer_status;
  bool refusals_exact = true;
  std::string refusals_detail;
  auto expect_class = [&](analyzer::DecodeError error, uint64_t expected) {
    uint64_t counted = shed.datagrams_rejected[size_t(error)];
    table.Row(std::string("datagrams refused: ") + analyzer::DecodeErrorName(error), Number(counted),
              "expected " + Number(expected));
    if (counted != expected) {
      refusals_exact = false;
      refusals_detail += std::string(refusals_detail.empty() ? "" : "; ") + analyzer::DecodeErrorName(error) +
                         " counted " + Number(counted) + ", sent " + Number(expected);
    }
  };
  for (analyzer::DecodeError error : kForgedClasses) expect_class(error, figures.proxy.forged_by_class[size_t(error)]);
  expect_class(analyzer::DecodeError::kUnknownSender, figures.faults.unknown_sender_sent);
  expect_class(analyzer::DecodeError::kReplayed, figures.proxy.to_host_replayed);
  expect_class(analyzer::DecodeError::kStaleBoot, figures.proxy.to_host_stale_boot);
  uint64_t rejected = 0;
  for (uint64_t count : shed.datagrams_rejected) rejected += count;
  uint64_t sent_to_host = figures.proxy.to_host_total + figures.faults.unknown_sender_sent;
  table.Row("peer datagrams to the host: sent / received", Number(sent_to_host) + " / " +
                                                               Number(peers.datagrams_received),
            Number(peers.datagrams_accepted) + " accepted (expected " + Number(figures.proxy.to_host_accepted) +
                "), " + Number(rejected) + " refused, " + Number(figures.kernel_drops) + " dropped by the kernel");
  bool datagrams_add_up = peers.datagrams_accepted == figures.proxy.to_host_accepted &&
                          peers.datagrams_received == peers.datagrams_accepted + rejected &&
                          peers.datagrams_received + figures.kernel_drops == sent_to_host;
  checks.push_back({"every peer datagram refused was counted, in its class", refusals_exact && datagrams_add_up,
                    refusals_detail + (datagrams_add_up ? ""
                                                        : "; received " + Number(peers.datagrams_received) +
                                                              " != accepted + refused, or != sent - kernel drops")});
  table.Row("proxy: dropped / duplicated / reordered / delayed / replayed",
            Number(figures.proxy.dropped) + " / " + Number(figures.proxy.duplicated) + " / " +
                Number(figures.proxy.reordered) + " / " + Number(figures.proxy.delayed) + " / " +
                Number(figures.proxy.replayed),
            Number(figures.proxy.from_peers) + " from the peers, " + Number(figures.proxy.from_host) +
                " from the host");

  table.Row("alarms raised / in the file / lost", Number(figures.alarms_published) + " / " +
                                                      Number(figures.alarm_lines) + " / " +
                                                      Number(health.alarms_failed_writes),
            Number(figures.torn_alarm_lines) + " torn lines; alarms disk read-only " +
                Fixed(double(figures.faults.alarms_disk_read_only_ms) / 1000.0, 1) + " s, full " +
                Number(figures.faults.alarms_disk_fills) + " times");
  checks.push_back({"every alarm reached the alarms file or was counted lost",
                    figures.alarms_published == figures.alarm_lines + health.alarms_failed_writes &&
                        figures.torn_alarm_lines <= health.alarms_failed_writes,
                    Number(figures.alarms_published) + " raised, " + Number(figures.alarm_lines) + " in the file, " +
                        Number(health.alarms_failed_writes) + " counted lost, " + Number(figures.torn_alarm_lines) +
                        " torn"});

  uint64_t expected_ticks = health.ticks > 1 + health.tick_failures ? health.ticks - 1 - health.tick_failures : 0;
  table.Row("recording: tick records read / lost writes", Number(figures.recorded_ticks) + " / " +
                                                              Number(health.recording_failed_writes),
            Number(expected_ticks) + " ticks recorded; disk full " + Number(figures.faults.record_disk_fills) +
                " times; " + Number(figures.recording_problems.size()) + " problems reading it");
  std::string recording_detail;
  for (const std::string& problem : figures.recording_problems) {
    recording_detail += (recording_detail.empty() ? "" : "; ") + problem;
    if (recording_detail.size() > 300) break;
  }
  checks.push_back({"every tick reached the recording or was counted lost, and the recording reads back",
                    figures.recording_read && figures.recording_problems.empty() &&
                        figures.recorded_ticks + health.recording_failed_writes >= expected_ticks &&
                        figures.recorded_ticks <= expected_ticks,
                    recording_detail});
  table.Row("analyzer: ticks / missed / windows compared", Number(health.ticks) + " / " + Number(shed.ticks_missed) +
                                                               " / " + Number(health.windows_analyzed),
            Number(shed.summaries_late) + " peer summaries too late to compare, " +
                Number(shed.datagram_receive_errors) + " receive errors");
  table.Row("hot path: calls without a slot / table full / samples lost",
            Number(segment.calls_without_slot) + " / " + Number(segment.function_table_full) + " / " +
                Number(segment.samples.samples_lost),
            Number(segment.threads_without_slot) + " threads without a slot, " +
                Number(segment.diagnostics.overflowed_calls) + " overflowed calls, " +
                Number(segment.calls_during_hooks) + " calls during hooks (" +
                Number(segment.calls_during_hooks_lost) + " lost)");
  table.Row("readers killed mid-read / done first", Number(figures.faults.readers.killed_while_reading) + " / " +
                                                        Number(figures.faults.readers.finished_first),
            Number(figures.faults.readers.failed_to_start) + " failed to start");
  table.Row("peers killed", Number(figures.faults.peer_kills),
            Number(figures.faults.peer_restart_failures) + " restarts failed");
  checks.push_back({"the host's exec'd children left no stale segment behind", figures.children_segments_stale == 0,
                    Number(figures.children_segments_stale) + " stale"});
  checks.push_back({"the run itself met no problem", figures.problems.empty(), ""});

  std::printf("\nlimpwatch-soak: seed %" PRIu64 ", %.0f s (warm-up %.0f s)\n\nFIGURES\n", figures.seed,
              figures.run_seconds, figures.warm_up_seconds);
  table.Print();
  if (!figures.faults.skipped.empty()) {
    std::printf("\nSKIPPED\n");
    for (const auto& [action, why] : figures.faults.skipped) std::printf("  %s: %s\n", action.c_str(), why.c_str());
  }
  std::printf("\nACTIONS\n");
  for (const auto& [action, count] : figures.faults.actions) {
    std::printf("  %-34s %s\n", action.c_str(), Number(count).c_str());
  }
  for (const std::string& problem : figures.problems) std::printf("\nPROBLEM  %s", problem.c_str());
  std::printf("\nCHECKS\n");
  bool all = true;
  for (const Check& check : checks) {
    all = all && check.held;
    std::printf("  %s  %s%s%s\n", check.held ? "ok  " : "FAIL", check.property.c_str(),
                check.detail.empty() ? "" : ": ", check.detail.c_str());
  }
  std::printf("\nlimpwatch-soak: %s (seed %" PRIu64 ")\n", all ? "every property held" : "FAILED", figures.seed);
  return all;
}

}  // namespace limpwatch::soak
