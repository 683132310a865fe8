// tools/prometheus/limpwatch.rules.yml: valid (promtool check rules), doing
// what its unit tests say (promtool test rules), and about metrics that
// `limpwatch serve` really writes.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "serve/exposition_parser.h"
#include "serve/metrics_exposition.h"
#include "serve/prometheus_tools.h"
#include "serve/test_segments.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

const std::string kRulesDirectory = std::string(LIMPWATCH_SOURCE_DIR) + "/tools/prometheus";

TEST(serve_rules, PromtoolChecksAndTestsTheRules) {
  std::string promtool = FindOnPath("promtool");
  if (promtool.empty()) GTEST_SKIP() << MissingPrometheusTool("promtool");
  ProgramRun checked = RunProgram(promtool, {"check", "rules", kRulesDirectory + "/limpwatch.rules.yml"}, {});
  EXPECT_EQ(checked.exit_status, 0) << checked.output;
  ProgramRun tested = RunProgram("/bin/sh", {"-c", "cd '" + kRulesDirectory + "' && '" + promtool +
                                                       "' test rules limpwatch.rules.test.yml 2>&1"},
                                 {});
  EXPECT_EQ(tested.exit_status, 0) << tested.output;
}

// A metric renamed in the exposition and not in the rules would leave an
// alert that never fires.
TEST(serve_rules, EveryMetricTheRulesUseIsServed) {
  TestSegments segments;
  const shm::SegmentView* view = segments.Create("rules");
  ASSERT_NE(view, nullptr);
  view->analyzer_health()->ticks.store(1);
  RaiseAlarm(*view, analyzer::AlarmKind::kAnomaly, "x", shm::Resource::kCpu, 2, 1, UnixNowMs());
  cli::serve::SegmentCollector collector(false);
  ParsedExposition page = ParseExposition(cli::serve::RenderMetrics(collector.Collect(), {}));
  std::ifstream file(kRulesDirectory + "/limpwatch.rules.yml");
  std::stringstream rules;
  rules << file.rdbuf();
  std::set<std::string> used;
  std::regex metric("limpwatch_[a-z_]+");
  std::string text = rules.str();
  for (auto match = std::sregex_iterator(text.begin(), text.end(), metric); match != std::sregex_iterator(); ++match) {
    used.insert(match->str());
  }
  EXPECT_EQ(used.size(), 4u);  // alarm_open, analyzer_ticks_total, analyzer_ticks_missed_total, analyzer_summaries_late_total
  for (const std::string& name : used) EXPECT_TRUE(page.types.count(name)) << name << " is not served";
}

}  // namespace
}  // namespace limpwatch::testing
