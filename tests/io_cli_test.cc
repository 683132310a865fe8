// `limpwatch dump` and `limpwatch top` show the I/O and node metrics of a
// traced program (io_calls "busy": every 10 ms a 4 KiB file write, a pipe
// round trip and a read(-1) that fails with EBADF).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <regex>

#include "support/io_run.h"

namespace limpwatch::testing {
namespace {

constexpr const char* kCli = LIMPWATCH_CLI_PATH;

// JSON text without the whitespace between tokens (none of the checked
// strings holds a space), so members can be matched in order.
std::string Compact(const std::string& json) {
  std::string out;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '"' && (i == 0 || json[i - 1] != '\\')) in_string = !in_string;
    if (!in_string && std::isspace(static_cast<unsigned char>(c))) continue;
    out += c;
  }
  return out;
}

bool HasLine(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex("(^|\n)" + pattern + "(\n|$)"));
}

TEST(IoCliTest, DumpShowsIoPerKindAndOperationWithErrnoNames) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  IoRun io = RunIoCalls({"busy", directory.path(), "300"});  // 30 rounds
  SegmentCleanup cleanup(io.name);
  std::string object = shm::SegmentObjectName(io.name, io.run.pid);

  ProgramRun text = RunProgram(kCli, {"dump", object}, {});
  ASSERT_EQ(text.exit_status, 0) << text.output;
  // An exited segment: totals, no rates.
  EXPECT_TRUE(HasLine(text.output, "file +write +30 +- +122880 +- +[0-9.]+ +[0-9.]+ +0")) << text.output;
  EXPECT_TRUE(HasLine(text.output, "pipe +read +30 +- +1920 +- +[0-9.]+ +[0-9.]+ +0")) << text.output;
  EXPECT_TRUE(HasLine(text.output, "other +read +30 +- +0 +- +[0-9.]+ +[0-9.]+ +30")) << text.output;
  EXPECT_TRUE(HasLine(text.output, "other +read +EBADF +30")) << text.output;
  EXPECT_NE(text.output.find("NODE METRICS"), std::string::npos);

  ProgramRun json = RunProgram(kCli, {"dump", object, "--json"}, {});
  ASSERT_EQ(json.exit_status, 0) << json.output;
  std::string compact = Compact(json.output);
  EXPECT_NE(compact.find(R"({"kind":"file","operation":"write","calls":30,"bytes":122880,)"), std::string::npos)
      << compact;
  EXPECT_NE(compact.find(R"({"kind":"other","operation":"read","errno":9,"name":"EBADF","count":30})"),
            std::string::npos)
      << compact;
  EXPECT_NE(compact.find(R"("dwrite":{"calls":30,)"), std::string::npos) << compact;
  EXPECT_NE(compact.find(R"("node_metrics":{"valid":)"), std::string::npos) << compact;
}

TEST(IoCliTest, TopShowsTheIntervalsIoAndNodeMetrics) {
  ScratchDirectory directory;
  ASSERT_FALSE(directory.path().empty());
  std::string name = UniqueSegmentName("io-top");
  SegmentCleanup cleanup(name);
  int output = -1;
  pid_t pid = StartProgram(TestProgram("io_calls"), {"busy", directory.path(), "4000"},
                           {"LIMPWATCH_NAME=" + name, "LIMPWATCH_STORAGE_DIR=" + directory.path()}, &output);
  ASSERT_GT(pid, 0);
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  ASSERT_EQ(ReadLine(output), "started");
  close(output);

  ProgramRun top = RunProgram(kCli, {"top", shm::SegmentObjectName(name, pid), "-n", "2", "-d", "1.1"}, {});
  ASSERT_EQ(top.exit_status, 0) << top.output;
  // The second frame: both its snapshots have node samples by then.
  std::string frame = top.output.substr(top.output.rfind("segment "));
  EXPECT_TRUE(HasLine(frame, "file write +[0-9]+\\.[0-9] +0\\.[0-9]+ +[0-9.]+ ms +0\\.0")) << frame;
  EXPECT_TRUE(HasLine(frame, "pipe read +[0-9]+\\.[0-9] +0\\.[0-9]+ +[0-9.]+ ms +0\\.0")) << frame;
  EXPECT_TRUE(HasLine(frame, "other read +[0-9]+\\.[0-9] +0\\.000 +[0-9.]+ ms +[1-9][0-9]*\\.[0-9]")) << frame;
  EXPECT_TRUE(HasLine(frame, "errnos in the interval  other read EBADF [1-9][0-9]*")) << frame;
  EXPECT_TRUE(std::regex_search(frame, std::regex("dwrite [0-9]+\\.[0-9]{3} ms \\([0-9.]+/s\\)"))) << frame;
  EXPECT_TRUE(std::regex_search(frame, std::regex("\nnode  intr [0-9]+/s  ctxt [0-9]+/s  alloc"))) << frame;
  EXPECT_TRUE(std::regex_search(frame, std::regex("\ndisk  (device |none)"))) << frame;
}

}  // namespace
}  // namespace limpwatch::testing
