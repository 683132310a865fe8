// limpwatch-eval's scoring (tools/eval/scoring.h, report.h): which alarms
// count as found and which as false, and how the table and results.json say
// so, for a fault on one server and for one on every server alike.
#include <gtest/gtest.h>

#include <string>

#include "report.h"
#include "scoring.h"

namespace limpwatch::eval {
namespace {

constexpr uint64_t kGraceMs = 10000;

ObservedAlarm AnomalyOn(const std::string& server, uint64_t time_unix_ms) {
  ObservedAlarm alarm;
  alarm.kind = "anomaly";
  alarm.reporter = "server0";
  alarm.server = server;
  alarm.metrics = {"time"};
  alarm.resource = "cpu";
  alarm.time_unix_ms = time_unix_ms;
  return alarm;
}

Experiment FaultyExperiment(const std::string& fault) {
  Experiment experiment;
  experiment.workload = "postmark";
  experiment.fault = fault;
  experiment.cluster_wide = IsClusterWideFault(fault);
  if (!experiment.cluster_wide) experiment.faulty_server = "server1";
  experiment.start_ms = 1000;
  experiment.fault_start_ms = 20000;
  experiment.fault_end_ms = 40000;
  experiment.end_ms = 60000;
  return experiment;
}

TEST(EvalScoringTest, SlowPathIsClusterWideAndTheOneServerFaultsAreNot) {
  EXPECT_TRUE(IsClusterWideFault("slow-path"));
  EXPECT_FALSE(IsClusterWideFault("disk-busy"));
  EXPECT_FALSE(IsClusterWideFault("none"));
}

TEST(EvalScoringTest, AnAlarmOnTheFaultyServerDuringItsFaultIsFound) {
  Experiment experiment = FaultyExperiment("disk-busy");
  experiment.alarms = {AnomalyOn("server1", 25000)};
  ExperimentScore score = ScoreExperiment(experiment, kGraceMs);
  EXPECT_TRUE(score.true_positive_applies);
  EXPECT_TRUE(score.true_positive);
  EXPECT_FALSE(score.false_positive);
}

TEST(EvalScoringTest, AnyAlarmDuringAClusterWideFaultIsAFalsePositiveAndNeverFound) {
  // Every server runs the regression: whichever one is indicted, even during
  // the fault, peer comparison named a server that limps no more than the rest.
  for (const std::string server : {"server0", "server1", "server3"}) {
    Experiment experiment = FaultyExperiment("slow-path");
    experiment.alarms = {AnomalyOn(server, 25000)};
    ExperimentScore score = ScoreExperiment(experiment, kGraceMs);
    EXPECT_FALSE(score.true_positive_applies) << server;
    EXPECT_FALSE(score.true_positive) << server;
    EXPECT_TRUE(score.false_positive) << server;
    EXPECT_FALSE(score.latency_s.has_value()) << server;
  }
  Experiment silent = FaultyExperiment("slow-path");
  EXPECT_FALSE(ScoreExperiment(silent, kGraceMs).false_positive);
}

TEST(EvalScoringTest, TheTableShowsNoTruePositiveRateForAClusterWideFault) {
  Experiment found = FaultyExperiment("disk-busy");
  found.alarms = {AnomalyOn("server1", 25000)};
  Experiment regression = FaultyExperiment("slow-path");
  regression.alarms = {AnomalyOn("server2", 25000)};
  auto classes = ScoreByFault({found, regression}, kGraceMs);
  ASSERT_EQ(classes.count("slow-path"), 1u);
  EXPECT_FALSE(classes["slow-path"].true_positive_applies);
  EXPECT_EQ(classes["slow-path"].false_positives, 1);
  EXPECT_EQ(classes["slow-path"].true_positives, 0);

  std::string table = RenderTable(classes);
  size_t row = table.find("\nslow-path");
  ASSERT_NE(row, std::string::npos) << table;
  std::string slow_path_row = table.substr(row + 1, table.find('\n', row + 1) - row - 1);
  // runs 1, TP% "-", FP% 100.0: no true-positive rate where none applies.
  EXPECT_NE(slow_path_row.find(" 1            -        100.0"), std::string::npos) << slow_path_row;
  // "all" counts TP over the one-server fault only: 1 of 1.
  size_t all = table.find("\nall");
  ASSERT_NE(all, std::string::npos) << table;
  EXPECT_NE(table.find("100.0", all), std::string::npos) << table;
  EXPECT_NE(table.find("cluster-wide"), std::string::npos) << table;

  std::string json = RenderJson({found, regression}, classes, kGraceMs);
  EXPECT_NE(json.find("\"slow-path\": {\"experiments\": 1, \"true_positives\": 0, \"false_positives\": 1, "
                      "\"true_positive_applies\": false, \"cluster_wide\": true"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"fault\": \"slow-path\", \"faulty_server\": \"\", \"cluster_wide\": true, \"repetition\": 0, "
                      "\"true_positive\": null, \"false_positive\": true"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"fault\": \"disk-busy\", \"faulty_server\": \"server1\", \"cluster_wide\": false, "
                      "\"repetition\": 0, \"true_positive\": true"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace limpwatch::eval
