// The exposition of `limpwatch serve`, driven directly (collector and
// renderer, no HTTP): real segments filled with known counts, read back
// through the text format.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "limpwatch/analyzer/peer_wire.h"
#include "serve/exposition_parser.h"
#include "serve/metrics_exposition.h"
#include "serve/segment_collector.h"
#include "serve/test_segments.h"
#include "serve/textfile.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

using cli::serve::ExpositionSettings;
using cli::serve::RenderMetrics;
using cli::serve::SegmentCollector;

ParsedExposition Scrape(SegmentCollector& collector, const ExpositionSettings& settings = {}) {
  ParsedExposition parsed = ParseExposition(RenderMetrics(collector.Collect(), settings));
  for (const std::string& problem : parsed.problems) ADD_FAILURE() << problem;
  return parsed;
}

// The counts FillServer puts in: two threads, one of them with I/O and errors.
void FillServer(const shm::SegmentView& view) {
  RegisterFunction(view, 0, "main", 0x1001);
  RegisterFunction(view, 1, "ns::Store::Write(char const*, unsigned long)", 0x1002);
  RegisterFunction(view, 2, "idle", 0x1003);
  ActivateSlot(view, 0, 101);
  ActivateSlot(view, 1, 102);
  AddCounts(view, 0, 0, 10, 5'000'000'000);  // 5 s of self time
  AddCounts(view, 1, 1, 7, 250'000'000);
  AddCounts(view, 0, 1, 3, 250'000'000);      // 10 calls and 0.5 s in all
  view.retired()->diagnostics.untracked_calls.store(4);
  view.slot(0)->diagnostics.overflowed_calls.store(2);
  view.slot(1)->diagnostics.resynced_frames.store(1);
  AddIo(view, 0, shm::FdKind::kFile, shm::IoOperation::kWrite, 8, 8192, 2'000'000, 1);
  AddIo(view, 1, shm::FdKind::kFile, shm::IoOperation::kWrite, 2, 2048, 1'000'000, 1);
  AddIo(view, 1, shm::FdKind::kTcp, shm::IoOperation::kRead, 5, 500, 500'000, 0);
  AddErrno(view, 0, 0, shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC, 1);
  AddErrno(view, 1, 0, shm::FdKind::kFile, shm::IoOperation::kWrite, ENOSPC, 1);
  view.sample_table()->source.store(static_cast<uint32_t>(shm::SampleSource::kPerfCpuClock));
  view.sample_table()->samples_total.store(900);
  view.sample_table()->samples_lost.store(12);
  view.analyzer_health()->ticks.store(42);
  view.analyzer_health()->windows_analyzed.store(40);
}

TEST(serve_exposition, EveryCountOfASegmentIsServedUnderItsServerLabel) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("counts");
  ASSERT_NE(view, nullptr);
  FillServer(*view);
  uint64_t now = UnixNowMs();
  PublishPeers(*view, 30, 27, 3, {{"peer-a", 20}, {"peer-b", 7}, {"peer-c", 0}}, now);
  // As the analyzer counts them: by the peer wire's DecodeError.
  view->analyzer_shedding()->datagrams_rejected[static_cast<size_t>(analyzer::DecodeError::kReplayed)].store(2);
  view->analyzer_shedding()->datagrams_rejected[static_cast<size_t>(analyzer::DecodeError::kBadMagic)].store(1);
  // Every place the runtime and the analyzer shed work, each its own count.
  view->analyzer_shedding()->summaries_late.store(5);
  view->analyzer_shedding()->ticks_missed.store(3);
  view->analyzer_shedding()->exchange_internal_errors.store(7);
  view->analyzer_shedding()->datagram_receive_errors.store(4);
  view->analyzer_shedding()->replay_senders_forgotten.store(6);
  view->analyzer_shedding()->io_uring_refused.store(shm::kRingOfRecording);
  view->header()->counters.threads_without_slot.store(8);
  view->header()->counters.calls_during_hooks_lost.store(9);
  SegmentCollector collector(false);
  ParsedExposition page = Scrape(collector);
  const std::string server = TestSegments::Name("counts");
  const std::map<std::string, std::string> of{{"server", server}};

  EXPECT_EQ(page.Value("limpwatch_server_info", {{"server", server}, {"object", segments.Object("counts")},
                                                 {"program", "serve_test"}, {"pid", std::to_string(getpid())}}),
            1);
  EXPECT_EQ(page.Value("limpwatch_traced_calls_total", of), 20);
  EXPECT_EQ(page.Value("limpwatch_untracked_calls_total", of), 4);
  EXPECT_EQ(page.Value("limpwatch_overflowed_calls_total", of), 2);
  EXPECT_EQ(page.Value("limpwatch_resynced_frames_total", of), 1);
  EXPECT_EQ(page.Value("limpwatch_function_calls_total", {{"server", server}, {"function", "main"}}), 10);
  EXPECT_EQ(page.Value("limpwatch_function_self_seconds_total", {{"server", server}, {"function", "main"}}), 5.0);
  EXPECT_EQ(page.Value("limpwatch_function_calls_total",
                       {{"server", server}, {"function", "ns::Store::Write(char const*, unsigned long)"}}),
            10);
  // Never called: no series.
  EXPECT_TRUE(page.Find("limpwatch_function_calls_total", {{"function", "idle"}}).empty());

  const std::map<std::string, std::string> file_write{{"server", server}, {"fd_kind", "file"}, {"operation", "write"}};
  EXPECT_EQ(page.Value("limpwatch_io_calls_total", file_write), 10);
  EXPECT_EQ(page.Value("limpwatch_io_bytes_total", file_write), 10240);
  EXPECT_EQ(page.Value("limpwatch_io_errors_total", file_write), 2);
  EXPECT_DOUBLE_EQ(*page.Value("limpwatch_io_seconds_total", file_write), 0.003);
  EXPECT_EQ(page.Value("limpwatch_io_calls_total", {{"server", server}, {"fd_kind", "tcp"}, {"operation", "read"}}), 5);
  EXPECT_EQ(page.Find("limpwatch_io_calls_total", of).size(), 2u) << "a series for an (fd kind, operation) never used";
  EXPECT_EQ(page.Value("limpwatch_io_errno_total", {{"server", server}, {"errno", "ENOSPC"}, {"fd_kind", "file"}}), 2);
  EXPECT_EQ(page.Value("limpwatch_service_calls_total", {{"server", server}, {"metric", "dwrite"}}), 10);
  EXPECT_DOUBLE_EQ(*page.Value("limpwatch_service_time_seconds_total", {{"server", server}, {"metric", "dwrite"}}),
                   0.003);
  EXPECT_EQ(page.Value("limpwatch_service_calls_total", {{"server", server}, {"metric", "dread"}}), 0);
  EXPECT_EQ(page.Value("limpwatch_cpu_samples_total", of), 900);
  EXPECT_EQ(page.Value("limpwatch_cpu_samples_lost_total", of), 12);
  EXPECT_EQ(page.Value("limpwatch_analyzer_ticks_total", of), 42);
  EXPECT_EQ(page.Value("limpwatch_analyzer_windows_total", of), 40);
  EXPECT_EQ(page.Value("limpwatch_peer_datagrams_received_total", of), 30);
  EXPECT_EQ(page.Value("limpwatch_peer_datagrams_rejected_total", of), 3);
  EXPECT_EQ(page.Value("limpwatch_peer_datagrams_rejected_by_class_total", {{"server", server}, {"class", "replayed"}}),
            2);
  EXPECT_EQ(page.Value("limpwatch_peer_datagrams_rejected_by_class_total", {{"server", server}, {"class", "bad_magic"}}),
            1);
  EXPECT_EQ(page.Value("limpwatch_peer_datagrams_rejected_by_class_total", {{"server", server}, {"class", "truncated"}}),
            0);
  EXPECT_EQ(page.Find("limpwatch_peer_datagrams_rejected_by_class_total", of).size(), analyzer::kDecodeErrorCount - 1)
      << "one series per rejection class";
  EXPECT_EQ(page.Value("limpwatch_analyzer_summaries_late_total", of), 5);
  EXPECT_EQ(page.Value("limpwatch_analyzer_ticks_missed_total", of), 3);
  EXPECT_EQ(page.Value("limpwatch_analyzer_exchange_errors_total", of), 7);
  EXPECT_EQ(page.Value("limpwatch_peer_receive_errors_total", of), 4);
  EXPECT_EQ(page.Value("limpwatch_peer_replay_senders_forgotten_total", of), 6);
  EXPECT_EQ(page.Value("limpwatch_analyzer_io_uring_refused", {{"server", server}, {"ring", "recording"}}), 1);
  EXPECT_EQ(page.Value("limpwatch_analyzer_io_uring_refused", {{"server", server}, {"ring", "exchange"}}), 0);
  EXPECT_EQ(page.Value("limpwatch_analyzer_io_uring_refused", {{"server", server}, {"ring", "alarms_file"}}), 0);
  EXPECT_EQ(page.Value("limpwatch_threads_without_slot_total", of), 8);
  EXPECT_EQ(page.Value("limpwatch_calls_during_hooks_lost_total", of), 9);
  EXPECT_EQ(page.Value("limpwatch_peer_summaries_accepted_total", {{"server", server}, {"peer", "peer-a"}}), 20);
  EXPECT_EQ(page.Find("limpwatch_peer_last_heard_seconds", of).size(), 2u) << "peer-c was never heard";
  EXPECT_EQ(page.types["limpwatch_traced_calls_total"], "counter");
  EXPECT_EQ(page.types["limpwatch_functions_called"], "gauge");
}

TEST(serve_exposition, AlarmsAreCountedByIndictedServerResourceAndKindAndOpenWhileRecent) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("alarms");
  ASSERT_NE(view, nullptr);
  uint64_t now = UnixNowMs();
  RaiseAlarm(*view, analyzer::AlarmKind::kAnomaly, "server2", shm::Resource::kDisk, 3.5, 1.0, now - 200'000);
  RaiseAlarm(*view, analyzer::AlarmKind::kAnomaly, "server2", shm::Resource::kDisk, 4.25, 1.0, now - 1'000);
  RaiseAlarm(*view, analyzer::AlarmKind::kSilent, "server3", shm::Resource::kProcess, 5, 5, now - 300'000);
  RaiseAlarm(*view, analyzer::AlarmKind::kErrors, "server1", shm::Resource::kDisk, 9, 3, now - 2'000);
  // Node-local invariants alone: the same metric names as an anomaly, its own kind.
  RaiseAlarm(*view, analyzer::AlarmKind::kLocal, "server2", shm::Resource::kDisk, 2, 1, now - 3'000);
  SegmentCollector collector(false);
  ParsedExposition page = Scrape(collector);
  const std::string reporter = TestSegments::Name("alarms");
  std::map<std::string, std::string> disk{{"reporter", reporter}, {"server", "server2"}, {"resource", "disk"},
                                          {"kind", "anomaly"}};
  std::map<std::string, std::string> silent{{"reporter", reporter}, {"server", "server3"}, {"resource", "process"},
                                            {"kind", "silent"}};
  std::map<std::string, std::string> errors{{"reporter", reporter}, {"server", "server1"}, {"resource", "disk"},
                                            {"kind", "errors"}};
  std::map<std::string, std::string> local{{"reporter", reporter}, {"server", "server2"}, {"resource", "disk"},
                                           {"kind", "local"}};
  EXPECT_EQ(page.Value("limpwatch_alarms_raised_total", {{"reporter", reporter}}), 5);
  EXPECT_EQ(page.Value("limpwatch_alarms_total", disk), 2);
  EXPECT_EQ(page.Value("limpwatch_alarms_total", local), 1);
  EXPECT_EQ(page.Value("limpwatch_alarms_total", silent), 1);
  EXPECT_EQ(page.Value("limpwatch_alarms_total", errors), 1);
  EXPECT_EQ(page.Value("limpwatch_alarm_open", disk), 1) << "the newest disk alarm is a second old";
  EXPECT_EQ(page.Value("limpwatch_alarm_open", silent), 0) << "five minutes old";
  EXPECT_EQ(page.Value("limpwatch_alarm_open", errors), 1);
  EXPECT_EQ(page.Value("limpwatch_alarm_score", disk), 4.25) << "the newest alarm's";
  EXPECT_EQ(page.Value("limpwatch_alarm_threshold", errors), 3);
  EXPECT_DOUBLE_EQ(*page.Value("limpwatch_alarm_last_time_seconds", disk), double(now - 1'000) / 1e3);

  ExpositionSettings short_open;
  short_open.open_alarm_seconds = 0.5;
  EXPECT_EQ(Scrape(collector, short_open).Value("limpwatch_alarm_open", disk), 0);
}

analyzer::MetricScore Score(const std::string& server, analyzer::ComparedMetric metric, double score,
                            double threshold, double ratio, bool anomalous) {
  analyzer::MetricScore result;
  result.server = server;
  result.metric = metric;
  result.score = score;
  result.threshold = threshold;
  result.ratio = ratio;
  result.anomalous = anomalous;
  return result;
}

// Per metric, the score the analyzer gave the segment's own server in its
// newest window, against its threshold; its peers' scores (which every
// analyzer computes too) are their own segments' to serve.
TEST(serve_exposition, TheServersOwnScoresAreServedAgainstTheirThresholds) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("scores");
  ASSERT_NE(view, nullptr);
  const std::string server = TestSegments::Name("scores");
  SegmentCollector collector(false);
  EXPECT_FALSE(Scrape(collector).Value("limpwatch_score", {{"server", server}, {"metric", "dread"}}))
      << "no window compared yet: no score series";

  analyzer::WindowResult window;
  window.window = 17;
  window.servers = {server, "peer-b", "peer-c"};
  window.scores = {Score(server, analyzer::ComparedMetric::kDread, 9.5, 4.0, 12.5, true),
                   Score(server, analyzer::ComparedMetric::kTime, 0.25, 4.0, 1.02, false),
                   Score("peer-b", analyzer::ComparedMetric::kDread, 0.5, 4.0, 0.9, false)};
  uint64_t now = UnixNowMs();
  PublishScores(*view, server, window, now);
  ParsedExposition page = Scrape(collector);
  const std::map<std::string, std::string> dread{{"server", server}, {"metric", "dread"}};
  const std::map<std::string, std::string> time{{"server", server}, {"metric", "time"}};
  EXPECT_EQ(page.Value("limpwatch_score", dread), 9.5);
  EXPECT_EQ(page.Value("limpwatch_score_threshold", dread), 4.0);
  EXPECT_EQ(page.Value("limpwatch_score_ratio_to_peers", dread), 12.5);
  EXPECT_EQ(page.Value("limpwatch_score_over_threshold", dread), 1);
  EXPECT_EQ(page.Value("limpwatch_score", time), 0.25);
  EXPECT_EQ(page.Value("limpwatch_score_over_threshold", time), 0);
  EXPECT_DOUBLE_EQ(*page.Value("limpwatch_score_updated_time_seconds", {{"server", server}}), double(now) / 1e3);
  EXPECT_FALSE(page.Value("limpwatch_score", {{"server", "peer-b"}, {"metric", "dread"}}));
  EXPECT_EQ(page.types["limpwatch_score"], "gauge");

  // A window without the server's own summary leaves its last scores shown.
  analyzer::WindowResult without_own;
  without_own.window = 18;
  without_own.servers = {"peer-b"};
  without_own.scores = {Score("peer-b", analyzer::ComparedMetric::kDread, 1.0, 4.0, 1.0, false)};
  PublishScores(*view, server, without_own, now + 1000);
  EXPECT_EQ(Scrape(collector).Value("limpwatch_score", dread), 9.5);
}

// 10,000 traced functions: the function series stay at the bound, the ones
// with the most self time, and two functions of one name stay two series.
TEST(serve_exposition, FunctionSeriesStayAtTheBoundWithTenThousandFunctions) {
  TestSegments segments;
  shm::Geometry geometry = SmallGeometry();
  geometry.max_functions = 10000;
  const shm::SegmentView* view = segments.Create("many", geometry);
  ASSERT_NE(view, nullptr);
  ActivateSlot(*view, 0, 1);
  for (uint32_t id = 0; id < 10000; ++id) {
    RegisterFunction(*view, id, "function_" + std::to_string(id), 0x10000 + id);
    AddCounts(*view, 0, id, 1, 1000 + id);  // the higher the id, the more self time
  }
  // The two busiest share a name: a static function of two files.
  RegisterFunction(*view, 9999, "helper", 0xaaaa);
  RegisterFunction(*view, 9998, "helper", 0xbbbb);
  SegmentCollector collector(false);
  const std::string server = TestSegments::Name("many");
  for (size_t bound : {size_t{20}, size_t{7}}) {
    ExpositionSettings settings;
    settings.top_functions = bound;
    ParsedExposition page = Scrape(collector, settings);
    std::vector<ParsedSeries> calls = page.Find("limpwatch_function_calls_total", {{"server", server}});
    std::vector<ParsedSeries> self = page.Find("limpwatch_function_self_seconds_total", {{"server", server}});
    ASSERT_EQ(calls.size(), bound);
    ASSERT_EQ(self.size(), bound);
    EXPECT_EQ(page.Value("limpwatch_functions_called", {{"server", server}}), 10000);
    std::set<std::string> served;
    for (const ParsedSeries& series : self) served.insert(series.labels.at("function"));
    EXPECT_TRUE(served.count("helper #000000000000aaaa")) << "the busiest, told apart by its symbol's hash";
    EXPECT_TRUE(served.count("helper #000000000000bbbb"));
    EXPECT_TRUE(served.count("function_" + std::to_string(10000 - bound)));
    EXPECT_FALSE(served.count("function_" + std::to_string(9999 - bound))) << "outside the top " << bound;
  }
}

// Every counter of a page read by a reader started later is at least what
// the earlier reader showed: the counts are the segment's, not the reader's.
TEST(serve_exposition, CountersNeverDecreaseAcrossAReaderRestart) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("restart");
  ASSERT_NE(view, nullptr);
  FillServer(*view);
  uint64_t now = UnixNowMs();
  RaiseAlarm(*view, analyzer::AlarmKind::kAnomaly, "server2", shm::Resource::kDisk, 3, 1, now);
  ParsedExposition before;
  {
    SegmentCollector first_reader(false);
    before = Scrape(first_reader);
  }
  // The server goes on while no reader runs.
  AddCounts(*view, 0, 0, 5, 100);
  AddIo(*view, 1, shm::FdKind::kTcp, shm::IoOperation::kRead, 1, 10, 10, 0);
  view->analyzer_health()->ticks.fetch_add(3);
  RaiseAlarm(*view, analyzer::AlarmKind::kAnomaly, "server2", shm::Resource::kDisk, 3, 1, now + 1000);
  SegmentCollector second_reader(false);
  ParsedExposition after = Scrape(second_reader);
  const std::string server = TestSegments::Name("restart");
  size_t compared = 0;
  for (const auto& [key, series] : before.series) {
    if (before.types[series.family] != "counter") continue;
    // The segment a series is of: its reporter in the alarm families (where
    // `server` is the server indicted), its server elsewhere.
    auto segment_label = series.labels.find("reporter");
    if (segment_label == series.labels.end()) segment_label = series.labels.find("server");
    if (segment_label == series.labels.end()) continue;
    if (segment_label->second != server) continue;  // another process's segment
    auto later = after.series.find(key);
    ASSERT_NE(later, after.series.end()) << key << " went away";
    EXPECT_GE(later->second.value, series.value) << key;
    ++compared;
  }
  EXPECT_GT(compared, 20u);
  EXPECT_EQ(after.Value("limpwatch_traced_calls_total", {{"server", server}}), 25);
  EXPECT_EQ(after.Value("limpwatch_alarms_total", {{"reporter", server}, {"server", "server2"}}), 2);
}

// A segment whose owner is another user is left out unless asked for.
TEST(serve_exposition, AnotherUsersSegmentIsNotServed) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a segment to another user needs root";
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("foreign");
  ASSERT_NE(view, nullptr);
  FillServer(*view);
  ASSERT_EQ(chown(("/dev/shm/" + segments.Object("foreign")).c_str(), 65534, 65534), 0) << std::strerror(errno);
  const std::string server = TestSegments::Name("foreign");
  SegmentCollector own_only(false);
  ParsedExposition page = Scrape(own_only);
  EXPECT_TRUE(page.Find("limpwatch_server_info", {{"server", server}}).empty());
  EXPECT_GE(*page.Value("limpwatch_serve_segments", {{"state", "other_user"}}), 1);
  SegmentCollector every_user(true);
  EXPECT_EQ(Scrape(every_user).Value("limpwatch_traced_calls_total", {{"server", server}}), 20);
}

// Two live processes under one name would share every series: each gets its pid.
TEST(serve_exposition, TwoLiveSegmentsOfOneNameAreToldApartByPid) {
  TestSegments segments;
  pid_t parent = getppid();
  const shm::SegmentView* mine = segments.Create("twin");
  const shm::SegmentView* parents = segments.Create("twin", SmallGeometry(), parent);
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(parents, nullptr);
  FillServer(*mine);
  SegmentCollector collector(false);
  ParsedExposition page = Scrape(collector);
  const std::string name = TestSegments::Name("twin");
  EXPECT_TRUE(page.Find("limpwatch_server_info", {{"server", name}}).empty());
  EXPECT_EQ(page.Value("limpwatch_traced_calls_total", {{"server", name + "." + std::to_string(getpid())}}), 20);
  EXPECT_EQ(page.Value("limpwatch_traced_calls_total", {{"server", name + "." + std::to_string(parent)}}), 0);
}

// Function names come from symbol tables: anything may be in them.
TEST(serve_exposition, LabelValuesAreEscapedAndPrintable) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("awkward");
  ASSERT_NE(view, nullptr);
  const std::string awkward = std::string("f<\"q\">(char\\)\n\x01 caf\xc3\xa9 \xff");
  RegisterFunction(*view, 0, awkward, 1);
  ActivateSlot(*view, 0, 1);
  AddCounts(*view, 0, 0, 1, 1);
  SegmentCollector collector(false);
  ParsedExposition page = Scrape(collector);
  std::vector<ParsedSeries> functions =
      page.Find("limpwatch_function_calls_total", {{"server", TestSegments::Name("awkward")}});
  ASSERT_EQ(functions.size(), 1u);
  EXPECT_EQ(functions[0].labels.at("function"), "f<\"q\">(char\\)?? caf\xc3\xa9 ?");
}

TEST(serve_exposition, TextfileIsReplacedWholeAndLeavesNothingBehind) {
  std::string directory = UniqueSegmentName("/tmp/lwserve-textfile-");
  ASSERT_TRUE(std::filesystem::create_directory(directory));
  std::string error;
  ASSERT_TRUE(cli::serve::WriteTextfile(directory, "a 1\n", &error)) << error;
  ASSERT_TRUE(cli::serve::WriteTextfile(directory, "b 2\n", &error)) << error;
  std::ifstream file(directory + "/limpwatch.prom");
  std::stringstream content;
  content << file.rdbuf();
  EXPECT_EQ(content.str(), "b 2\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(directory)) ++entries;
  EXPECT_EQ(entries, 1u) << "a temporary file was left";
  std::filesystem::remove_all(directory);
  EXPECT_FALSE(cli::serve::WriteTextfile(directory, "c 3\n", &error));
  EXPECT_NE(error.find(directory), std::string::npos) << error;
}

}  // namespace
}  // namespace limpwatch::testing
