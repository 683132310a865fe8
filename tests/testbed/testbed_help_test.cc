// Every test-bed program and limpwatch-eval answers --help with its usage on
// stdout and exit 0, and a flag it does not know with a message and the
// usage on stderr and exit 2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace limpwatch::testbed {
namespace {

struct Answer {
  int exit_status = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

Answer RunProgramWith(const std::string& program, const std::string& arguments) {
  std::string base = "/tmp/limpwatch-help-" + std::to_string(getpid());
  std::string command = program + " " + arguments + " > " + base + ".out 2> " + base + ".err < /dev/null";
  int status = std::system(command.c_str());
  Answer answer;
  answer.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  answer.out = ReadFile(base + ".out");
  answer.err = ReadFile(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return answer;
}

class HelpTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string Path() const {
    const std::string& name = GetParam();
    return name == "limpwatch-eval" ? std::string(LIMPWATCH_EVAL_PATH)
                                    : std::string(LIMPWATCH_TESTBED_DIR) + "/" + name;
  }
};

TEST_P(HelpTest, HelpIsUsageOnStdoutAndExitZero) {
  for (const char* asking : {"--help", "-h", "help"}) {
    SCOPED_TRACE(asking);
    Answer answer = RunProgramWith(Path(), asking);
    EXPECT_EQ(answer.exit_status, 0) << answer.err;
    EXPECT_EQ(answer.out.rfind("usage: " + GetParam() + " ", 0), 0u) << answer.out;
    EXPECT_EQ(answer.err, "");
  }
}

TEST_P(HelpTest, AnUnknownFlagIsUsageOnStderrAndExitTwo) {
  Answer answer = RunProgramWith(Path(), "--no-such-flag 1 --config /nonexistent --alias x");
  EXPECT_EQ(answer.exit_status, 2) << answer.out << answer.err;
  EXPECT_NE(answer.err.find("usage: " + GetParam() + " "), std::string::npos) << answer.err;
  EXPECT_EQ(answer.out, "");
}

// --small-fs INDEX:MIB: each malformed form is a usage error, before any
// server starts (its parser once read past a temporary string).
TEST(SmallFsFlagTest, MalformedValuesAreUsageErrors) {
  std::string launcher = std::string(LIMPWATCH_TESTBED_DIR) + "/limpwatch-testbed";
  std::string dir = "/tmp/limpwatch-small-fs-" + std::to_string(getpid());
  for (const char* value : {"1", ":64", "1:", "x:64", "1:64x", "-1:64", "1:4", "1:99999"}) {
    SCOPED_TRACE(value);
    Answer answer = RunProgramWith(launcher, std::string("start --dir ") + dir + " --small-fs '" + value + "'");
    EXPECT_EQ(answer.exit_status, 2) << answer.out << answer.err;
    EXPECT_NE((answer.out + answer.err).find("--small-fs is INDEX:MIB"), std::string::npos) << answer.out << answer.err;
  }
  std::system(("rm -rf " + dir).c_str());
}

INSTANTIATE_TEST_SUITE_P(EveryProgram, HelpTest,
                         ::testing::Values("limpwatch-testbed", "limpwatch-testbed-client", "limpwatch-testbed-server",
                                           "limpwatch-testbed-hog", "limpwatch-testbed-relay",
                                           "limpwatch-testbed-delayer", "limpwatch-eval"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char character : info.param) name += std::isalnum(character) ? character : '_';
                           return name;
                         });

}  // namespace
}  // namespace limpwatch::testbed
