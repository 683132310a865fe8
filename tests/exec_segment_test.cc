// A traced process that execs: its segment goes with its image
// (hooks/src/hooks_exec.cc). A forked child that execs, the usual way a
// server runs another program, leaves no segment behind; one whose exec
// fails is still listed and keeps its counts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "limpwatch/shm/segment.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> SegmentsNamed(const std::string& name) {
  std::vector<std::string> objects;
  for (const shm::SegmentListing& listing : shm::ListSegments()) {
    if (listing.parts.name == name) objects.push_back(listing.object_name);
  }
  return objects;
}

TEST(ExecSegmentTest, ForkedChildrenThatExecLeaveNoSegmentBehind) {
  std::string name = UniqueSegmentName("exec-ok");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("exec_child"), {"ok", "4"}, {"LIMPWATCH_NAME=" + name});
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_EQ(Lines(run.output).size(), 4u) << run.output;
  std::vector<std::string> left = SegmentsNamed(name);
  EXPECT_TRUE(left.empty()) << left.size() << " segments left, the first " << left.front();
}

TEST(ExecSegmentTest, AChildWhoseExecFailsIsStillListedWithItsCounts) {
  std::string name = UniqueSegmentName("exec-fail");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("exec_child"), {"fail", "2"}, {"LIMPWATCH_NAME=" + name});
  ASSERT_EQ(run.exit_status, 0) << run.output;
  std::vector<std::string> lines = Lines(run.output);
  ASSERT_EQ(lines.size(), 2u) << run.output;
  for (const std::string& line : lines) EXPECT_NE(line.find(" listed"), std::string::npos) << line;
  EXPECT_TRUE(SegmentsNamed(name).empty()) << "a child's segment outlived its normal exit";

  // Kept after exit (LIMPWATCH_KEEP=1): the calls before and after the failed exec are all there.
  std::string kept = UniqueSegmentName("exec-fail-kept");
  SegmentCleanup kept_cleanup(kept);
  run = RunProgram(TestProgram("exec_child"), {"fail", "1"}, {"LIMPWATCH_NAME=" + kept, "LIMPWATCH_KEEP=1"});
  ASSERT_EQ(run.exit_status, 0) << run.output;
  int child = 0;
  ASSERT_EQ(std::sscanf(run.output.c_str(), "child %d", &child), 1) << run.output;
  shm::Snapshot snapshot = ReadSegment(kept, child);
  EXPECT_EQ(CountersByName(snapshot)["child_work"].calls, 3u);
}

}  // namespace
}  // namespace limpwatch::testing
