// `limpwatch select` on a recorded profile of a known program: the functions
// it keeps, the manifest it writes (applied at run time) and the GCC flags it
// emits (accepted by GCC, and leaving the dropped functions unhooked).
#include <gtest/gtest.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

std::string Shell(const std::string& command, int* status) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[4096];
  size_t count;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, count);
  *status = pclose(pipe);
  return output;
}

std::string ReadText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::set<std::string> Included(const std::string& manifest) {
  std::set<std::string> names;
  std::istringstream lines(manifest);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("include ", 0) == 0) names.insert(line.substr(8));
  }
  return names;
}

// The instructions of one function in `objdump -d` output.
std::string Disassembly(const std::string& objdump, const std::string& function) {
  size_t start = objdump.find("<" + function + ">:\n");
  if (start == std::string::npos) return {};
  size_t end = objdump.find("\n\n", start);
  return objdump.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

constexpr const char* kHotCalls = "1000000";
constexpr const char* kWeightAndCost = "--min-seconds 0.05 --max-cost-percent 50";

class SelectCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = "/tmp/" + UniqueSegmentName("lw-selectcmd");
    std::string name = UniqueSegmentName("selectcmd");
    SegmentCleanup cleanup(name);
    // A million calls of child_hot: its tracing cost (60 ms at 60 ns a call)
    // then outweighs its own few-ns bodies by more than any preemption that
    // lands inside them can add (with 1000 calls, one 100 us stall did).
    ProgramRun run = RunProgram(TestProgram("selection"), {"tree", kHotCalls},
                                {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1"});
    ASSERT_EQ(run.exit_status, 0);
    int status = 0;
    Shell(std::string(LIMPWATCH_CLI_PATH) + " dump " + name + " --json > " + Path("profile.json"), &status);
    ASSERT_EQ(status, 0);
  }
  void TearDown() override {
    for (const char* suffix : {"profile.json", "manifest", "flags", "resources", "selected.o"}) {
      std::remove(Path(suffix).c_str());
    }
  }
  std::string Path(const std::string& suffix) const { return prefix_ + "." + suffix; }
  std::string Select(const std::string& options, int* status) {
    return Shell(std::string(LIMPWATCH_CLI_PATH) + " select " + Path("profile.json") + " -o " + Path("manifest") +
                     " --gcc-flags " + Path("flags") + " " + options + " 2>&1",
                 status);
  }

  std::string prefix_;
};

TEST_F(SelectCommandTest, KeepsWeightyFunctionsAndDropsCostlyOnes) {
  int status = 0;
  std::string report = Select(kWeightAndCost, &status);
  ASSERT_EQ(status, 0) << report;
  // Weight: >= 100 calls or >= 50 ms in the window. child_hot has a million
  // calls of a few ns each: 60 ns a call exceeds half its self time, so it goes.
  // (child_slow's own time, around its traced sleep_ms, is 1-2 us: under
  // the default 10 % its 3 calls would be a coin toss.)
  EXPECT_EQ(Included(ReadText(Path("manifest"))),
            (std::set<std::string>{"main", "parent_work", "child_slow", "sleep_ms"}))
      << ReadText(Path("manifest"));
  EXPECT_NE(report.find("kept 4 of 8 functions"), std::string::npos) << report;
  EXPECT_NE(report.find("estimated tracing cost: everything"), std::string::npos) << report;

  // The manifest, applied at run time, leaves the dropped functions untraced.
  std::string name = UniqueSegmentName("selectcmd-run");
  SegmentCleanup cleanup(name);
  ProgramRun run = RunProgram(TestProgram("selection"), {"tree"},
                              {"LIMPWATCH_NAME=" + name, "LIMPWATCH_KEEP=1", "LIMPWATCH_SELECT=" + Path("manifest")});
  ASSERT_EQ(run.exit_status, 0);
  auto counters = CountersByName(ReadSegment(name, run.pid));
  EXPECT_EQ(counters["parent_work"].calls, 1u);
  EXPECT_EQ(counters["child_slow"].calls, 3u);
  EXPECT_EQ(counters["child_hot"].calls, 0u);
  EXPECT_EQ(counters["static_helper_two"].calls, 0u);
}

TEST_F(SelectCommandTest, EmittedFlagsAreAcceptedByGccAndUnhookTheDroppedFunctions) {
  int status = 0;
  std::string report = Select(kWeightAndCost, &status);
  ASSERT_EQ(status, 0) << report;
  std::string flags = ReadText(Path("flags"));
  while (!flags.empty() && flags.back() == '\n') flags.pop_back();
  ASSERT_EQ(flags.rfind("-finstrument-functions-exclude-function-list=", 0), 0u) << flags;
  std::string compile = "cc -O0 -finstrument-functions -fno-inline " + flags + " -c " +
                        std::string(LIMPWATCH_SOURCE_DIR) + "/tests/programs/selection.c -o " + Path("selected.o") +
                        " 2>&1";
  std::string compiler_output = Shell(compile, &status);
  ASSERT_EQ(status, 0) << compiler_output;
  EXPECT_EQ(compiler_output, "");
  std::string objdump = Shell("objdump -dr --no-show-raw-insn " + Path("selected.o"), &status);
  ASSERT_EQ(status, 0);
  for (const char* kept : {"main", "parent_work", "child_slow", "sleep_ms"}) {
    EXPECT_NE(Disassembly(objdump, kept).find("__cyg_profile_func_enter"), std::string::npos) << kept;
  }
  for (const char* dropped : {"child_hot", "phase_a"}) {
    std::string code = Disassembly(objdump, dropped);
    ASSERT_FALSE(code.empty()) << dropped;
    if (std::string(dropped) == "child_hot") {
      EXPECT_EQ(code.find("__cyg_profile_func_enter"), std::string::npos) << code;
    } else {
      // Never called in the profile: not listed, so still hooked.
      EXPECT_NE(code.find("__cyg_profile_func_enter"), std::string::npos) << code;
    }
  }
}

TEST_F(SelectCommandTest, FunctionsNamedByTheResourceManifestAreKept) {
  std::ofstream(Path("resources")) << "static_helper_one cpu\n";
  int status = 0;
  std::string report = Select(
      "--min-seconds 0.05 --max-cost-percent 1000000000 --budget-percent 1000000000 -m " + Path("resources"), &status);
  ASSERT_EQ(status, 0) << report;
  std::set<std::string> kept = Included(ReadText(Path("manifest")));
  EXPECT_TRUE(kept.count("static_helper_one")) << ReadText(Path("manifest"));
  EXPECT_TRUE(kept.count("child_hot"));           // >= 100 calls, and cost no longer counts
  EXPECT_FALSE(kept.count("static_helper_two"));  // 7 calls, microseconds, not named
}

// A budget the kept functions exceed drops them, except what the resource
// manifest names; the manifest says which ones went for the budget.
TEST_F(SelectCommandTest, ABudgetDropsAllButTheNamedFunctions) {
  std::ofstream(Path("resources")) << "child_slow disk\n";
  int status = 0;
  std::string report = Select(std::string(kWeightAndCost) + " --budget-percent 0 -m " + Path("resources"), &status);
  ASSERT_EQ(status, 0) << report;
  std::string manifest = ReadText(Path("manifest"));
  EXPECT_EQ(Included(manifest), (std::set<std::string>{"child_slow"})) << manifest;
  for (const char* dropped : {"main", "parent_work", "sleep_ms"}) {
    EXPECT_NE(manifest.find(std::string("# over the budget: ") + dropped + "\n"), std::string::npos) << manifest;
  }
  EXPECT_EQ(manifest.find("# over the budget: child_hot"), std::string::npos) << "dropped for its cost, not the budget";
  EXPECT_NE(report.find("kept 1 of 8 functions"), std::string::npos) << report;
}

// Replaces every occurrence of `from` in `text`.
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// C++ names hold glob characters, and the segment cuts long names at
// kSymbolNameSize - 1 characters: the manifest's patterns must still match
// the functions they were written for, and nothing else.
TEST_F(SelectCommandTest, PatternsMatchCppNamesWithGlobCharactersAndCutNames) {
  const std::string full_long_name =
      "limpwatch::testbed::bmi::Connection::PostReceive(unsigned int, "
      "std::shared_ptr<limpwatch::testbed::bmi::ReceiveTarget>)";
  const std::string cut_long_name = full_long_name.substr(0, 103);  // as the segment holds it
  const std::string bracket_name = "Store::Path[abi:cxx11](unsigned long) const";
  std::string profile = ReadText(Path("profile.json"));
  profile = ReplaceAll(profile, "\"name\": \"parent_work\"", "\"name\": \"" + cut_long_name + "\"");
  profile = ReplaceAll(profile, "\"name\": \"child_slow\"", "\"name\": \"" + bracket_name + "\"");
  ASSERT_NE(profile.find(cut_long_name), std::string::npos);
  std::ofstream(Path("profile.json")) << profile;
  int status = 0;
  std::string report = Select(kWeightAndCost, &status);
  ASSERT_EQ(status, 0) << report;
  std::string manifest = ReadText(Path("manifest"));
  std::set<std::string> patterns = Included(manifest);
  ASSERT_EQ(patterns.size(), 4u) << manifest;
  auto matching = [&](const std::string& name) {
    std::vector<std::string> found;
    for (const std::string& pattern : patterns) {
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0) found.push_back(pattern);
    }
    return found;
  };
  EXPECT_EQ(matching(full_long_name).size(), 1u) << manifest;
  EXPECT_EQ(matching(cut_long_name).size(), 1u) << manifest;
  EXPECT_EQ(matching(bracket_name).size(), 1u) << manifest;
  // An unescaped "[abi:cxx11]" would be a character class matching this one.
  EXPECT_TRUE(matching("Store::Patha(unsigned long) const").empty()) << manifest;
  EXPECT_EQ(matching("main").size(), 1u) << manifest;
}

TEST_F(SelectCommandTest, RejectsWhatIsNotADump) {
  std::ofstream(Path("resources")) << "{\"segments\": []}\n";
  int status = 0;
  std::string output = Shell(std::string(LIMPWATCH_CLI_PATH) + " select " + Path("resources") + " 2>&1", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(output.find("not a 'limpwatch dump --json' file"), std::string::npos) << output;
}

}  // namespace
}  // namespace limpwatch::testing
