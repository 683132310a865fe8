// The dashboard of `limpwatch serve` rendered from real segments (collector,
// score history, page; no HTTP): which server is marked limping and why, the
// charts of each compared window, one server's page, and the query
// parameter that names it.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "serve/dashboard_page.h"
#include "serve/http_request.h"
#include "serve/metrics_exposition.h"
#include "serve/score_history.h"
#include "serve/segment_collector.h"
#include "serve/test_segments.h"

namespace limpwatch::testing {
namespace {

using cli::serve::Collection;
using cli::serve::ExpositionSettings;
using cli::serve::RenderDashboard;
using cli::serve::RenderServerPage;
using cli::serve::ScoreHistory;
using cli::serve::SegmentCollector;

constexpr uint64_t kTenMinutesMs = 600'000;

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

// The collection of this test's own segments: the node may hold others (a
// test running beside this one), which the page would show too.
Collection OwnSegments(SegmentCollector& collector, const std::set<std::string>& servers) {
  Collection collection = collector.Collect();
  std::erase_if(collection.segments,
                [&servers](const cli::serve::ServedSegment& segment) { return !servers.count(segment.server); });
  return collection;
}

analyzer::WindowResult OneScore(const std::string& server, analyzer::ComparedMetric metric, double score,
                                double threshold, bool over) {
  analyzer::WindowResult window;
  window.servers = {server, "peer"};
  analyzer::MetricScore row;
  row.server = server;
  row.metric = metric;
  row.score = score;
  row.threshold = threshold;
  row.anomalous = over;
  window.scores = {row};
  return window;
}

// Two analyzers of this node report the same server: one row for it in the
// alarms, "2 of 2", and its server row marked limping on the alarm's resource.
// A server name is escaped wherever it appears; the page asks nothing of the network.
TEST(dashboard, AnOpenAlarmMarksItsServerLimpingWithItsResourceAndReporters) {
  TestSegments segments;
  const shm::SegmentView* first = segments.Create("dash1");
  const shm::SegmentView* second = segments.Create("dash2");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  uint64_t now = UnixNowMs();
  for (const shm::SegmentView* view : {first, second}) {
    view->analyzer_health()->ticks.store(10);
    RaiseAlarm(*view, analyzer::AlarmKind::kAnomaly, "srv<2>", shm::Resource::kDisk, 7.5, 3, now - 1'000);
  }
  RaiseAlarm(*first, analyzer::AlarmKind::kSilent, "server3", shm::Resource::kProcess, 5, 5, now - 300'000);
  SegmentCollector collector(false);
  Collection collection = OwnSegments(collector, {TestSegments::Name("dash1"), TestSegments::Name("dash2")});
  ScoreHistory history(kTenMinutesMs);
  history.Record(collection);
  std::string page = RenderDashboard(collection, history, ExpositionSettings{});

  EXPECT_NE(page.find("<tr class=\"server limping\" data-server=\"srv&lt;2&gt;\" data-state=\"limping\" "
                      "data-resource=\"disk\">"),
            std::string::npos)
      << page;
  EXPECT_EQ(page.find("srv<2>"), std::string::npos) << "a name must be escaped";
  EXPECT_EQ(Count(page, "<tr class=\"alarm\""), 1u) << page;
  EXPECT_NE(page.find(">2 of 2 on this node<"), std::string::npos) << page;
  EXPECT_EQ(page.find("data-server=\"server3\""), std::string::npos) << "its alarm is five minutes old: not open";
  EXPECT_NE(page.find("<tr class=\"server\" data-server=\"" + TestSegments::Name("dash1") + "\" data-state=\"ok\">"),
            std::string::npos)
      << "a served server no alarm indicts is listed as ok";
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_FALSE(std::regex_search(page, std::regex("(src|href)=\"(https?:)?//"))) << "self-contained";
  EXPECT_NE(page.find("<meta http-equiv=\"refresh\""), std::string::npos);
}

// An alarm raised before its peers' verdicts came ("1 of 4") and brought up
// to date by its analyzer in the ring ("4 of 4"): the dashboard and the
// exposition follow the ring, and the dashboard takes the widest count of
// the node's analyzers.
TEST(dashboard, TheClustersAgreementOnAnAlarmIsShownAndFollowedAsItGrows) {
  TestSegments segments;
  const shm::SegmentView* first = segments.Create("agree1");
  const shm::SegmentView* second = segments.Create("agree2");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  uint64_t now = UnixNowMs();
  uint64_t sequence = RaiseAlarm(*first, analyzer::AlarmKind::kAnomaly, "s2", shm::Resource::kDisk, 7.5, 3,
                                 now - 2'000, 1, 4);
  RaiseAlarm(*second, analyzer::AlarmKind::kAnomaly, "s2", shm::Resource::kDisk, 7.5, 3, now - 2'000, 2, 4);
  std::set<std::string> own{TestSegments::Name("agree1"), TestSegments::Name("agree2")};
  SegmentCollector collector(false);
  Collection before = OwnSegments(collector, own);
  ScoreHistory history(kTenMinutesMs);
  std::string page = RenderDashboard(before, history, ExpositionSettings{});
  EXPECT_NE(page.find(">2 of 4 analyzers<"), std::string::npos) << page;
  EXPECT_NE(page.find("data-agreeing=\"2\" data-analyzers=\"4\""), std::string::npos) << page;

  ASSERT_TRUE(analyzer::UpdateAlarmAgreement(*first, sequence, 4, 4));
  Collection after = OwnSegments(collector, own);
  page = RenderDashboard(after, history, ExpositionSettings{});
  EXPECT_NE(page.find(">4 of 4 analyzers<"), std::string::npos) << page;
  std::string metrics = cli::serve::RenderMetrics(after, ExpositionSettings{});
  std::string series = "limpwatch_alarm_agreeing{reporter=\"" + TestSegments::Name("agree1") +
                       "\",server=\"s2\",resource=\"disk\",kind=\"anomaly\"} 4";
  EXPECT_NE(metrics.find(series), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("limpwatch_alarm_analyzers{reporter=\"" + TestSegments::Name("agree2") +
                         "\",server=\"s2\",resource=\"disk\",kind=\"anomaly\"} 4"),
            std::string::npos)
      << metrics;
}

// Every compared window is a point of its metric's chart, once; the windows
// over the threshold are marked.
TEST(dashboard, ChartsHoldEachComparedWindowOnceAndMarkThoseOverTheThreshold) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("chart");
  ASSERT_NE(view, nullptr);
  const std::string server = TestSegments::Name("chart");
  SegmentCollector collector(false);
  ScoreHistory history(kTenMinutesMs);
  uint64_t now = UnixNowMs();
  PublishScores(*view, server, OneScore(server, analyzer::ComparedMetric::kDread, 2, 4, false), now - 2'000);
  history.Record(OwnSegments(collector, {server}));
  history.Record(OwnSegments(collector, {server}));  // no new window: no new point
  PublishScores(*view, server, OneScore(server, analyzer::ComparedMetric::kDread, 9, 4, true), now - 1'000);
  Collection collection = OwnSegments(collector, {server});
  history.Record(collection);

  ASSERT_EQ(history.servers().count(server), 1u);
  const auto& points = history.servers().at(server).metrics.at("dread");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_FALSE(points[0].over);
  EXPECT_TRUE(points[1].over);
  std::string page = RenderDashboard(collection, history, ExpositionSettings{});
  std::smatch line;
  ASSERT_TRUE(std::regex_search(page, line, std::regex("<polyline [^>]*points=\"([^\"]*)\""))) << page;
  EXPECT_EQ(Count(line[1].str(), ","), 2u) << line[1].str();
  EXPECT_EQ(Count(page, "<circle "), 1u) << "one window over the threshold";
  EXPECT_NE(page.find("<th>dread</th>"), std::string::npos);
}

TEST(dashboard, AServersPageShowsItsScoresServiceTimesAndTopFunctions) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("page");
  ASSERT_NE(view, nullptr);
  const std::string server = TestSegments::Name("page");
  RegisterFunction(*view, 0, "dbpf_write<int>", 0x2001);
  RegisterFunction(*view, 1, "never_called", 0x2002);
  ActivateSlot(*view, 0, 7);
  AddCounts(*view, 0, 0, 12, 3'000'000'000);
  AddIo(*view, 0, shm::FdKind::kFile, shm::IoOperation::kWrite, 4, 4096, 8'000'000, 0);
  PublishScores(*view, server, OneScore(server, analyzer::ComparedMetric::kDwrite, 9, 4, true), UnixNowMs());
  SegmentCollector collector(false);
  Collection collection = collector.Collect();
  std::string page = RenderServerPage(collection, server);
  EXPECT_NE(page.find("<td>dbpf_write&lt;int&gt;</td><td class=\"num\">12</td><td class=\"num\">3.000</td>"),
            std::string::npos)
      << page;
  EXPECT_EQ(page.find("never_called"), std::string::npos);
  EXPECT_NE(page.find("<td>dwrite</td><td class=\"num\">4</td><td class=\"num\">2.000</td>"), std::string::npos)
      << page;
  EXPECT_NE(page.find("<td>dwrite</td><td class=\"num\">9.000</td><td class=\"num\">4.000</td>"), std::string::npos)
      << page;
  EXPECT_EQ(RenderServerPage(collection, "nobody"), "");
}

TEST(dashboard, TheServerIsNamedByAPercentEncodedQueryParameter) {
  cli::serve::HttpRequest request;
  auto with = [&request](const std::string& target) {
    request.target = target;
    return cli::serve::QueryParameter(request, "name");
  };
  EXPECT_EQ(with("/server?name=tb%3C1%3E"), "tb<1>");
  EXPECT_EQ(with("/server?x=1&name=a+b&name=second"), "a b");
  EXPECT_EQ(with("/server?name="), "");
  EXPECT_EQ(with("/server?names=x"), std::nullopt);
  EXPECT_EQ(with("/server"), std::nullopt);
  EXPECT_EQ(with("/server?name=%G1"), std::nullopt);
  EXPECT_EQ(with("/server?name=%4"), std::nullopt);
}

}  // namespace
}  // namespace limpwatch::testing
