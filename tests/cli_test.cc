// End-to-end tests of the `limpwatch` command-line reader.
//
// Each test creates real segments in /dev/shm with SegmentWriter (names carry
// the test's pid, so parallel runs do not collide), fills counters and symbols
// directly through the segment view, runs the CLI binary and checks its output
// and exit status. Segments are removed in TearDown, which gtest runs also
// after a failed assertion.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/shm/layout.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"
#include "support/resolved_symbol.h"
#include "support/strict_json.h"

extern char** environ;

namespace limpwatch {
namespace {

using shm::SegmentView;
using shm::SegmentWriter;

constexpr const char* kCliPath = LIMPWATCH_CLI_PATH;
constexpr double kCliTimeoutSeconds = 30;

using testing::Json;
using testing::ParseJson;

// ---- Running the CLI -----------------------------------------------------------

double NowSeconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

struct CliResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// The CLI as a child process with stdout and stderr captured through pipes
// (never a terminal, so `top` prints plain frames). The destructor kills and
// reaps a child still running, so a failed test leaves no process behind.
class CliProcess {
 public:
  explicit CliProcess(const std::vector<std::string>& args) {
    int out_pipe[2];
    int err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2: " << std::strerror(errno);
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
    std::vector<std::string> words = {kCliPath};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    int error = posix_spawn(&pid_, kCliPath, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    out_fd_ = out_pipe[0];
    err_fd_ = err_pipe[0];
    if (error != 0) {
      ADD_FAILURE() << "posix_spawn " << kCliPath << ": " << std::strerror(error);
      pid_ = -1;
    }
  }

  ~CliProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_fd_ >= 0) close(out_fd_);
    if (err_fd_ >= 0) close(err_fd_);
  }

  pid_t pid() const { return pid_; }
  const std::string& out() const { return result_.out; }

  // Reads output until stdout contains `needle`; false on timeout or EOF.
  bool WaitForOutput(std::string_view needle, double timeout_seconds) {
    double deadline = NowSeconds() + timeout_seconds;
    while (result_.out.find(needle) == std::string::npos) {
      if (!Pump(deadline)) return false;
    }
    return true;
  }

  // Reads everything until the child closes its output, then reaps it. A
  // child still running at the timeout is killed (and the test fails).
  CliResult Finish(double timeout_seconds = kCliTimeoutSeconds) {
    double deadline = NowSeconds() + timeout_seconds;
    while (out_fd_ >= 0 || err_fd_ >= 0) {
      if (!Pump(deadline)) break;
    }
    if (pid_ > 0) {
      if (out_fd_ >= 0 || err_fd_ >= 0) {
        ADD_FAILURE() << "limpwatch did not finish within " << timeout_seconds << " s; killing it";
        kill(pid_, SIGKILL);
      }
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    return result_;
  }

 private:
  // One poll round. False when the deadline passed or both pipes are closed.
  bool Pump(double deadline) {
    pollfd fds[2];
    int count = 0;
    if (out_fd_ >= 0) fds[count++] = {out_fd_, POLLIN, 0};
    if (err_fd_ >= 0) fds[count++] = {err_fd_, POLLIN, 0};
    if (count == 0) return false;
    double remaining = deadline - NowSeconds();
    if (remaining <= 0) return false;
    int ready = poll(fds, count, static_cast<int>(remaining * 1000) + 1);
    if (ready < 0 && errno != EINTR) return false;
    for (int i = 0; i < count; ++i) {
      if (fds[i].revents == 0) continue;
      bool is_out = fds[i].fd == out_fd_;
      char buffer[65536];
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        (is_out ? result_.out : result_.err).append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        (is_out ? out_fd_ : err_fd_) = -1;
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  CliResult result_;
};

CliResult RunCli(const std::vector<std::string>& args) { return CliProcess(args).Finish(); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// The line whose first word is `first_word`, or "".
std::string LineStartingWith(const std::string& text, const std::string& first_word) {
  for (const auto& line : Lines(text)) {
    if (line.rfind(first_word + " ", 0) == 0) return line;
  }
  return "";
}

// The contract for every failure: nothing on stdout, exactly one line on
// stderr, starting with "limpwatch: ".
void ExpectOneLineError(const CliResult& result, int exit_code, std::string_view must_contain) {
  EXPECT_EQ(result.exit_code, exit_code) << "stderr: " << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("limpwatch: ", 0), 0u) << result.err;
  ASSERT_FALSE(result.err.empty());
  EXPECT_EQ(result.err.back(), '\n');
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
  EXPECT_NE(result.err.find(must_contain), std::string::npos) << "'" << must_contain << "' not in: " << result.err;
}

// ---- Building segments -------------------------------------------------------

// A child that exits at once: its pid belongs to no process afterwards.
pid_t DeadPid() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  EXPECT_GT(child, 0);
  waitpid(child, nullptr, 0);
  return child;
}

uint64_t Ticks() { return shm::ReadTicks(shm::ClockSource::kMonotonicRaw); }
constexpr uint64_t kTicksPerMs = 1000000;  // kMonotonicRaw: one tick is one ns

void RegisterFunction(const SegmentView& view, uint32_t id, std::string_view name, uint64_t address,
                      uint64_t name_hash) {
  testing::WriteResolvedSymbol(view, id, name, address, name_hash);
}

void ActivateSlot(const SegmentView& view, uint32_t slot, uint32_t tid) {
  view.slot(slot)->tid.store(tid);
  view.slot(slot)->generation.store(1);
  view.slot(slot)->state.store(static_cast<uint32_t>(shm::SlotState::kActive), std::memory_order_release);
}

void AddCounts(const SegmentView& view, uint32_t slot, uint32_t function, uint64_t calls, uint64_t self_ticks,
               uint64_t total_ticks) {
  shm::FunctionCounters& counters = view.counters(slot)[function];
  counters.calls.fetch_add(calls);
  counters.self_ticks.fetch_add(self_ticks);
  counters.total_ticks.fetch_add(total_ticks);
}

class CliTest : public ::testing::Test {
 protected:
  void TearDown() override {
    writers_.clear();
    for (const auto& object : objects_) shm_unlink(("/" + object).c_str());
  }

  // A LIMPWATCH_NAME unique to this test and this process.
  std::string UniqueName(std::string_view tag) {
    return "lwcli-" + std::string(tag) + "-" + std::to_string(getpid());
  }

  // A small real segment named after `tag`, owned (in its header and name) by `owner_pid`.
  SegmentWriter* CreateSegment(std::string_view tag, pid_t owner_pid = getpid()) {
    shm::OwnerInfo owner;
    owner.name = UniqueName(tag);
    owner.program = "cli_test";
    owner.pid = owner_pid;
    owner.parent_pid = getppid();
    owner.clock_source = shm::ClockSource::kMonotonicRaw;
    owner.ns_per_tick = 1.0;
    shm::Geometry geometry;
    geometry.max_functions = 64;
    geometry.max_threads = 8;
    geometry.stack_depth = 16;
    geometry.alarm_capacity = 4;
    std::string object = shm::SegmentObjectName(owner.name, owner_pid);
    objects_.push_back(object);  // before Create: removed even if the test fails right after
    std::string error;
    auto writer = SegmentWriter::Create(object, geometry, owner, &error);
    EXPECT_NE(writer, nullptr) << error;
    if (writer == nullptr) return nullptr;
    writers_.push_back(std::move(writer));
    return writers_.back().get();
  }

  // A raw object in the segment namespace holding `bytes`, not made by SegmentWriter.
  std::string CreateRawObject(std::string_view tag, pid_t pid, const std::string& bytes) {
    std::string object = shm::SegmentObjectName(UniqueName(tag), pid);
    objects_.push_back(object);
    int fd = shm_open(("/" + object).c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0) << object << ": " << std::strerror(errno);
    if (fd < 0) return object;
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    return object;
  }

  static std::string Garbage(size_t size) {
    std::mt19937_64 random(size);
    std::string bytes(size, '\0');
    for (auto& byte : bytes) byte = static_cast<char>(random());
    return bytes;
  }

  static bool ObjectExists(const std::string& object) {
    int fd = shm_open(("/" + object).c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return false;
    close(fd);
    return true;
  }

  std::vector<std::unique_ptr<SegmentWriter>> writers_;
  std::vector<std::string> objects_;
};

// The suite is named after the binary, lower case, so that `ctest -R cli`
// (ctest regexes are case-sensitive) selects exactly these tests.
using cli = CliTest;

// ---- dump ----------------------------------------------------------------------

// A name with everything JSON must escape, a multi-byte character and a byte
// that is not UTF-8 at all.
const std::string kAwkwardName = std::string("ns::f<\"q\">(char\\, \t)\x01 caf\xc3\xa9 \xff");
const std::string kAwkwardNameAsJson = std::string("ns::f<\"q\">(char\\, \t)\x01 caf\xc3\xa9 \xef\xbf\xbd");

// Fills `view` with a known set of counts; the tests below check every one.
void FillDumpSegment(const SegmentView& view, uint64_t now_ticks) {
  RegisterFunction(view, 0, "main", 0x401000, 0x00c0ffee12345678ull);
  RegisterFunction(view, 1, kAwkwardName, 0x401200, 0xfedcba9876543210ull);
  RegisterFunction(view, 2, "idle", 0x401400, 0x1111);
  // Registered but never resolved: shows up under its address.
  view.symbols()[3].address.store(0x402000);
  view.symbols()[3].state.store(static_cast<uint32_t>(shm::SymbolState::kRegistered));
  view.header()->next_function_id.store(4);

  ActivateSlot(view, 0, 1111);
  AddCounts(view, 0, 0, 10, 1000, 5000);
  AddCounts(view, 0, 1, 3, 300, 400);
  view.slot(0)->diagnostics.unmatched_exits.store(2);
  view.slot(0)->depth.store(2);
  view.frames(0)[0].function.store(0);
  view.frames(0)[0].entry_ticks.store(now_ticks - 250 * kTicksPerMs);
  view.frames(0)[1].function.store(1);
  view.frames(0)[1].flags.store(shm::kFrameInherited);
  view.frames(0)[1].entry_ticks.store(now_ticks - 100 * kTicksPerMs);

  // A free slot's leftovers must not be counted.
  AddCounts(view, 1, 0, 1000000, 1000000, 1000000);

  ActivateSlot(view, 2, 2222);
  AddCounts(view, 2, 0, 5, 500, 2500);
  view.slot(2)->diagnostics.overflowed_calls.store(7);

  view.retired()->threads.store(3);
  view.retired()->diagnostics.resynced_frames.store(5);
  view.retired_counters()[1].calls.store(4);
  view.retired_counters()[1].self_ticks.store(40);
  view.retired_counters()[1].total_ticks.store(80);

  shm::ProcessCounters& counters = view.header()->counters;
  counters.functions_registered.store(4);
  counters.threads_started.store(5);
  counters.threads_retired.store(3);
  counters.calls_without_slot.store(9);
  counters.function_table_full.store(1);
}

TEST_F(cli, DumpJsonReportsExactCounts) {
  SegmentWriter* writer = CreateSegment("dump");
  ASSERT_NE(writer, nullptr);
  uint64_t now = Ticks();
  FillDumpSegment(writer->view(), now);

  // By LIMPWATCH_NAME; the object name must give the same segment.
  CliResult result = RunCli({"dump", UniqueName("dump"), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  Json dump;
  ASSERT_TRUE(ParseJson(result.out, &dump));

  EXPECT_EQ(dump["object"].AsString(), writer->object_name());
  EXPECT_EQ(dump["name"].AsString(), UniqueName("dump"));
  EXPECT_EQ(dump["program"].AsString(), "cli_test");
  EXPECT_EQ(dump["pid"].AsUint(), uint64_t(getpid()));
  EXPECT_EQ(dump["parent_pid"].AsUint(), uint64_t(getppid()));
  EXPECT_EQ(dump["liveness"].AsString(), "live");
  EXPECT_EQ(dump["version"].AsString(), "1." + std::to_string(shm::kVersionMinor));
  EXPECT_EQ(dump["clock_source"].AsString(), "monotonic_raw");
  EXPECT_EQ(dump["ns_per_tick"].AsDouble(), 1.0);
  EXPECT_EQ(dump["geometry"]["max_functions"].AsUint(), 64u);
  EXPECT_EQ(dump["geometry"]["max_threads"].AsUint(), 8u);
  EXPECT_EQ(dump["geometry"]["stack_depth"].AsUint(), 16u);
  EXPECT_EQ(dump["segment_size"].AsUint(), writer->size());
  EXPECT_TRUE(dump["consistent"].AsBool());
  EXPECT_EQ(dump["attempts"].AsUint(), 1u);
  EXPECT_GT(dump["taken_at_ns"].AsUint(), 0u);

  const Json& functions = dump["functions"];
  ASSERT_EQ(functions.items.size(), 4u);
  const Json& main_function = functions[0];
  EXPECT_EQ(main_function["id"].AsUint(), 0u);
  EXPECT_EQ(main_function["name"].AsString(), "main");
  EXPECT_EQ(main_function["name_hash"].AsString(), "00c0ffee12345678");
  EXPECT_EQ(main_function["address"].AsString(), "0x401000");
  EXPECT_EQ(main_function["state"].AsString(), "resolved");
  EXPECT_EQ(main_function["calls"].AsUint(), 15u);  // slots 0 and 2, not the free slot 1
  EXPECT_EQ(main_function["self_ticks"].AsUint(), 1500u);
  EXPECT_EQ(main_function["total_ticks"].AsUint(), 7500u);
  EXPECT_EQ(main_function["self_ns"].AsUint(), 1500u);
  EXPECT_EQ(main_function["total_ns"].AsUint(), 7500u);
  EXPECT_DOUBLE_EQ(main_function["avg_self_ns"].AsDouble(), 100.0);

  const Json& awkward = functions[1];
  EXPECT_EQ(awkward["name"].AsString(), kAwkwardNameAsJson);
  EXPECT_EQ(awkward["name_hash"].AsString(), "fedcba9876543210");
  EXPECT_EQ(awkward["calls"].AsUint(), 7u);  // 3 live + 4 retired
  EXPECT_EQ(awkward["self_ticks"].AsUint(), 340u);
  EXPECT_EQ(awkward["total_ticks"].AsUint(), 480u);

  EXPECT_EQ(functions[2]["name"].AsString(), "idle");
  EXPECT_EQ(functions[2]["calls"].AsUint(), 0u);
  EXPECT_EQ(functions[2]["avg_self_ns"].AsDouble(), 0.0);
  EXPECT_EQ(functions[3]["name"].AsString(), "0x402000");
  EXPECT_EQ(functions[3]["state"].AsString(), "registered");
  EXPECT_EQ(functions[3]["name_hash"].AsString(), "0000000000000000");

  const Json& threads = dump["threads"];
  ASSERT_EQ(threads.items.size(), 2u);
  EXPECT_EQ(threads[0]["slot"].AsUint(), 0u);
  EXPECT_EQ(threads[0]["tid"].AsUint(), 1111u);
  EXPECT_EQ(threads[0]["depth"].AsUint(), 2u);
  EXPECT_EQ(threads[0]["calls"].AsUint(), 13u);
  EXPECT_EQ(threads[0]["diagnostics"]["unmatched_exits"].AsUint(), 2u);
  const Json& frames = threads[0]["open_frames"];
  ASSERT_EQ(frames.items.size(), 2u);
  EXPECT_EQ(frames[0]["function"].AsString(), "main");
  EXPECT_EQ(frames[0]["function_id"].AsUint(), 0u);
  EXPECT_FALSE(frames[0]["inherited"].AsBool());
  EXPECT_EQ(frames[0]["entry_ticks"].AsUint(), now - 250 * kTicksPerMs);
  EXPECT_GE(frames[0]["elapsed_ms"].AsDouble(), 250.0);
  EXPECT_LT(frames[0]["elapsed_ms"].AsDouble(), 250.0 + 1000 * kCliTimeoutSeconds);
  EXPECT_EQ(frames[1]["function"].AsString(), kAwkwardNameAsJson);
  EXPECT_TRUE(frames[1]["inherited"].AsBool());
  EXPECT_GE(frames[1]["elapsed_ms"].AsDouble(), 100.0);
  EXPECT_LT(frames[1]["elapsed_ms"].AsDouble(), frames[0]["elapsed_ms"].AsDouble());
  EXPECT_EQ(threads[1]["slot"].AsUint(), 2u);
  EXPECT_EQ(threads[1]["tid"].AsUint(), 2222u);
  EXPECT_EQ(threads[1]["calls"].AsUint(), 5u);
  EXPECT_EQ(threads[1]["diagnostics"]["overflowed_calls"].AsUint(), 7u);
  EXPECT_EQ(threads[1]["open_frames"].items.size(), 0u);
  EXPECT_EQ(dump["retired_threads"].AsUint(), 3u);

  const Json& counters = dump["process_counters"];
  EXPECT_EQ(counters["functions_registered"].AsUint(), 4u);
  EXPECT_EQ(counters["threads_started"].AsUint(), 5u);
  EXPECT_EQ(counters["threads_retired"].AsUint(), 3u);
  EXPECT_EQ(counters["calls_without_slot"].AsUint(), 9u);
  EXPECT_EQ(counters["function_table_full"].AsUint(), 1u);
  EXPECT_EQ(counters["threads_without_slot"].AsUint(), 0u);
  const Json& diagnostics = dump["diagnostics"];
  EXPECT_EQ(diagnostics["unmatched_exits"].AsUint(), 2u);
  EXPECT_EQ(diagnostics["overflowed_calls"].AsUint(), 7u);
  EXPECT_EQ(diagnostics["resynced_frames"].AsUint(), 5u);  // from the retired totals
  EXPECT_EQ(diagnostics["untracked_calls"].AsUint(), 0u);

  CliResult by_object = RunCli({"dump", writer->object_name(), "--json"});
  ASSERT_EQ(by_object.exit_code, 0) << by_object.err;
  Json again;
  ASSERT_TRUE(ParseJson(by_object.out, &again));
  EXPECT_EQ(again["functions"][0]["calls"].AsUint(), 15u);
  EXPECT_EQ(again["object"].AsString(), writer->object_name());
}

TEST_F(cli, DumpTextIsAlignedAndSafeForTerminals) {
  SegmentWriter* writer = CreateSegment("dumptext");
  ASSERT_NE(writer, nullptr);
  FillDumpSegment(writer->view(), Ticks());

  // By pid: this test's only segment.
  CliResult result = RunCli({"dump", std::to_string(getpid())});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  const std::string& text = result.out;

  // Names from the segment must not reach the terminal as control characters.
  for (char c : text) {
    ASSERT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << "control character " << int(c);
  }
  EXPECT_EQ(text.find('\x01'), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "segment").find(writer->object_name()), std::string::npos);
  EXPECT_NE(LineStartingWith(text, "liveness").find("live"), std::string::npos);
  EXPECT_NE(text.find("FUNCTIONS (4 known)"), std::string::npos);
  EXPECT_NE(text.find("THREADS (2 live, 3 retired)"), std::string::npos);

  // The right-aligned CALLS column ends at the same offset in title and row.
  std::vector<std::string> lines = Lines(text);
  auto title = std::find_if(lines.begin(), lines.end(),
                            [](const std::string& line) { return line.rfind("ID  NAME", 0) == 0; });
  ASSERT_NE(title, lines.end()) << text;
  auto main_row = std::find_if(title, lines.end(),
                               [](const std::string& line) { return line.find(" main ") != std::string::npos; });
  ASSERT_NE(main_row, lines.end());
  size_t calls_end = title->find(" CALLS") + std::string(" CALLS").size();
  ASSERT_GE(main_row->size(), calls_end);
  EXPECT_EQ(main_row->substr(calls_end - 3, 3), " 15") << *title << "\n" << *main_row;
  EXPECT_NE(main_row->find("00c0ffee12345678"), std::string::npos);
  EXPECT_NE(main_row->find("0x401000"), std::string::npos);

  // Open frames: the inherited one is marked, with its function's name.
  auto inherited = std::find_if(lines.begin(), lines.end(),
                                [](const std::string& l) { return l.find("inherited  ns::f<") != std::string::npos; });
  EXPECT_NE(inherited, lines.end()) << text;
}

// ---- top -----------------------------------------------------------------------

struct TopRow {
  std::string function;
  double calls_per_second = 0;
  double self_ms_per_second = 0;
  double self_percent = 0;
};

// Splits `top` output into frames and parses the rows of each.
std::vector<std::vector<TopRow>> ParseTopFrames(const std::string& out, std::vector<std::string>* headers) {
  std::vector<std::vector<TopRow>> frames;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find("\n\n", start);
    std::string frame = out.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
    start = end == std::string::npos ? out.size() : end + 2;
    std::vector<TopRow> rows;
    bool in_table = false;
    std::string header;
    for (const auto& line : Lines(frame)) {
      if (line.rfind("FUNCTION ", 0) == 0) {
        in_table = true;
        continue;
      }
      if (!in_table) {
        header += line + "\n";
        continue;
      }
      if (line.empty() || line[0] == '(') continue;
      std::istringstream fields(line);
      TopRow row;
      fields >> row.function >> row.calls_per_second >> row.self_ms_per_second >> row.self_percent;
      rows.push_back(row);
    }
    headers->push_back(header);
    frames.push_back(rows);
  }
  return frames;
}

// Bumps three functions at fixed ratios, in a thread, while `top` watches:
//   calls: alpha 30 > beta 10 > gamma 1
//   self:  beta 50000 > gamma 5000 > alpha 1000
//   total: gamma 200000 > alpha 90000 > beta 60000
// and delta is registered but never called.
class Bumper {
 public:
  explicit Bumper(const SegmentView& view) : view_(view) {
    RegisterFunction(view, 0, "alpha", 0x1000, 1);
    RegisterFunction(view, 1, "beta", 0x2000, 2);
    RegisterFunction(view, 2, "gamma", 0x3000, 3);
    RegisterFunction(view, 3, "delta", 0x4000, 4);
    ActivateSlot(view, 0, 4242);
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        AddCounts(view_, 0, 0, 30, 1000, 90000);
        AddCounts(view_, 0, 1, 10, 50000, 60000);
        AddCounts(view_, 0, 2, 1, 5000, 200000);
        view_.slot(0)->diagnostics.untracked_calls.fetch_add(1);
        view_.slot(0)->diagnostics.unmatched_exits.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  ~Bumper() {
    stop_.store(true);
    thread_.join();
  }

 private:
  SegmentView view_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::vector<std::string> Names(const std::vector<TopRow>& rows) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.function);
  return names;
}

TEST_F(cli, TopOrdersFunctionsByTheChosenKey) {
  SegmentWriter* writer = CreateSegment("top");
  ASSERT_NE(writer, nullptr);
  Bumper bumper(writer->view());

  struct Case {
    std::vector<std::string> sort_args;
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {{"--sort", "calls"}, {"alpha", "beta", "gamma"}},
      {{}, {"beta", "gamma", "alpha"}},  // self is the default
      {{"--sort=total"}, {"gamma", "alpha", "beta"}},
  };
  for (const auto& test_case : cases) {
    std::vector<std::string> args = {"top", writer->object_name(), "-n", "2", "-d", "0.2"};
    args.insert(args.end(), test_case.sort_args.begin(), test_case.sort_args.end());
    SCOPED_TRACE(::testing::PrintToString(args));
    CliResult result = RunCli(args);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    EXPECT_EQ(result.out.find('\x1b'), std::string::npos) << "screen control codes on a pipe";

    std::vector<std::string> headers;
    auto frames = ParseTopFrames(result.out, &headers);
    ASSERT_EQ(frames.size(), 2u) << result.out;
    for (size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(Names(frames[i]), test_case.expected) << result.out;
      EXPECT_NE(headers[i].find("segment " + writer->object_name()), std::string::npos) << headers[i];
      EXPECT_NE(headers[i].find("pid " + std::to_string(getpid())), std::string::npos) << headers[i];
      EXPECT_NE(headers[i].find("threads 1 live  functions 4 known"), std::string::npos) << headers[i];
      // Losses and anomalies of the interval are shown, not hidden.
      std::smatch lost;
      ASSERT_TRUE(std::regex_search(headers[i], lost, std::regex("lost calls ([0-9]+)"))) << headers[i];
      EXPECT_GT(std::stoull(lost[1]), 0u);
      EXPECT_NE(headers[i].find("unmatched exits "), std::string::npos) << headers[i];
      std::smatch interval;
      ASSERT_TRUE(std::regex_search(headers[i], interval, std::regex("interval ([0-9.]+) s"))) << headers[i];
      EXPECT_GE(std::stod(interval[1]), 0.19);
    }
    for (const auto& frame : frames) {
      ASSERT_EQ(frame.size(), 3u);
      auto row_of = [&](const std::string& name) {
        for (const auto& row : frame) {
          if (row.function == name) return row;
        }
        return TopRow{};
      };
      TopRow alpha = row_of("alpha");
      TopRow beta = row_of("beta");
      TopRow gamma = row_of("gamma");
      // The bumper sleeps at least 2 ms per round, so beta cannot exceed
      // 10 calls / 2 ms = 5000/s and 50 us self / 2 ms = 25 ms/s. Rates taken
      // from cumulative counts instead of the interval would exceed that.
      EXPECT_GT(beta.calls_per_second, 500.0);
      EXPECT_LT(beta.calls_per_second, 5500.0);
      EXPECT_GT(beta.self_ms_per_second, 2.5);
      EXPECT_LT(beta.self_ms_per_second, 27.5);
      // A snapshot may fall inside a round: allow a round's worth of error.
      EXPECT_NEAR(alpha.calls_per_second / beta.calls_per_second, 3.0, 0.75);
      EXPECT_NEAR(beta.calls_per_second / gamma.calls_per_second, 10.0, 3.0);
      EXPECT_NEAR(beta.self_percent, 100.0 * 50000 / 56000, 3.0);
    }
  }

  CliResult limited = RunCli({"top", UniqueName("top"), "-n1", "-d", "0.1", "--limit", "2", "--sort", "calls"});
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  std::vector<std::string> headers;
  auto frames = ParseTopFrames(limited.out, &headers);
  ASSERT_EQ(frames.size(), 1u) << limited.out;
  EXPECT_EQ(Names(frames[0]), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_NE(limited.out.find("(1 more active functions not shown)"), std::string::npos) << limited.out;
}

TEST_F(cli, TopEndsWhenTheOwnerExits) {
  SegmentWriter* writer = CreateSegment("topexit");
  ASSERT_NE(writer, nullptr);
  Bumper bumper(writer->view());

  CliProcess top({"top", writer->object_name(), "-d", "0.1"});
  ASSERT_TRUE(top.WaitForOutput("FUNCTION", kCliTimeoutSeconds)) << top.out();
  double exited_at = NowSeconds();
  writer->view().header()->owner_state.store(static_cast<uint32_t>(shm::OwnerState::kExited));
  CliResult result = top.Finish();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_LT(NowSeconds() - exited_at, 5.0);
  ASSERT_FALSE(result.out.empty());
  std::vector<std::string> lines = Lines(result.out);
  EXPECT_NE(lines.back().find("is no longer running: segment exited"), std::string::npos) << result.out;
  EXPECT_NE(lines.back().find("pid " + std::to_string(getpid())), std::string::npos) << lines.back();
}

TEST_F(cli, TopStopsCleanlyOnSigintAndSigterm) {
  SegmentWriter* writer = CreateSegment("topsig");
  ASSERT_NE(writer, nullptr);
  for (int signal_number : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(strsignal(signal_number));
    CliProcess top({"top", writer->object_name(), "-d", "0.05"});
    ASSERT_TRUE(top.WaitForOutput("FUNCTION", kCliTimeoutSeconds)) << top.out();
    ASSERT_EQ(kill(top.pid(), signal_number), 0);
    CliResult result = top.Finish();
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    EXPECT_NE(result.out.find("(no calls in this interval)"), std::string::npos) << result.out;
  }
}

// An alarm's agreement grows after it was printed (its peers' verdicts come
// with their next summaries): --follow prints it again with the new count.
TEST_F(cli, AlarmsFollowPrintsAnAlarmAgainWhenMoreAnalyzersHoldIt) {
  SegmentWriter* writer = CreateSegment("alarmsfollow");
  ASSERT_NE(writer, nullptr);
  analyzer::Alarm alarm;
  alarm.server = "server2";
  alarm.resource = shm::Resource::kDisk;
  alarm.agreeing = {"server0"};
  alarm.analyzers = 4;
  uint64_t sequence = analyzer::PublishAlarm(writer->view(), alarm);
  CliProcess follow({"alarms", writer->object_name(), "--follow"});
  ASSERT_TRUE(follow.WaitForOutput("held by 1 of 4 analyzers\n", kCliTimeoutSeconds)) << follow.out();
  ASSERT_TRUE(analyzer::UpdateAlarmAgreement(writer->view(), sequence, 4, 4));
  ASSERT_TRUE(follow.WaitForOutput("held by 4 of 4 analyzers\n", kCliTimeoutSeconds)) << follow.out();
  ASSERT_EQ(kill(follow.pid(), SIGINT), 0);
  CliResult result = follow.Finish();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 2u) << result.out;  // printed again once, not at every poll
  EXPECT_EQ(lines[0].rfind("#" + std::to_string(sequence) + " ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("#" + std::to_string(sequence) + " ", 0), 0u) << lines[1];
}

TEST_F(cli, TopRefusesASegmentWhoseOwnerIsGone) {
  SegmentWriter* writer = CreateSegment("topstale", DeadPid());
  ASSERT_NE(writer, nullptr);
  ExpectOneLineError(RunCli({"top", writer->object_name(), "-n", "1"}), 1, "is not running (stale)");
}

// ---- list ----------------------------------------------------------------------

TEST_F(cli, ListShowsLiveAndStaleSegments) {
  SegmentWriter* live = CreateSegment("listlive");
  pid_t dead = DeadPid();
  SegmentWriter* stale = CreateSegment("liststale", dead);
  ASSERT_NE(live, nullptr);
  ASSERT_NE(stale, nullptr);

  CliResult result = RunCli({"list"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  std::vector<std::string> lines = Lines(result.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].rfind("OBJECT", 0), 0u) << lines[0];
  for (const char* title : {"NAME", "PID", "PROGRAM", "STATE", "SIZE", "CREATED"}) {
    EXPECT_NE(lines[0].find(title), std::string::npos) << title;
  }
  std::string live_line = LineStartingWith(result.out, live->object_name());
  std::string stale_line = LineStartingWith(result.out, stale->object_name());
  ASSERT_FALSE(live_line.empty()) << result.out;
  ASSERT_FALSE(stale_line.empty()) << result.out;
  std::regex live_pattern(" " + UniqueName("listlive") + " +" + std::to_string(getpid()) + " +cli_test +live +");
  EXPECT_TRUE(std::regex_search(live_line, live_pattern)) << live_line;
  std::regex stale_pattern(" " + std::to_string(dead) + " +cli_test +stale +");
  EXPECT_TRUE(std::regex_search(stale_line, stale_pattern)) << stale_line;

  CliResult json_result = RunCli({"list", "--json"});
  ASSERT_EQ(json_result.exit_code, 0) << json_result.err;
  Json listing;
  ASSERT_TRUE(ParseJson(json_result.out, &listing));
  int found = 0;
  for (const auto& segment : listing["segments"].items) {
    const std::string& object = segment["object"].AsString();
    if (object == live->object_name()) {
      ++found;
      EXPECT_EQ(segment["state"].AsString(), "live");
      EXPECT_EQ(segment["pid"].AsUint(), uint64_t(getpid()));
      EXPECT_EQ(segment["program"].AsString(), "cli_test");
      EXPECT_EQ(segment["name"].AsString(), UniqueName("listlive"));
      EXPECT_TRUE(segment["valid"].AsBool());
      EXPECT_EQ(segment["size"].AsUint(), live->size());
      EXPECT_GT(segment["created_ns"].AsUint(), 0u);
    } else if (object == stale->object_name()) {
      ++found;
      EXPECT_EQ(segment["state"].AsString(), "stale");
      EXPECT_EQ(segment["pid"].AsUint(), uint64_t(dead));
    }
  }
  EXPECT_EQ(found, 2) << json_result.out;
}

// ---- clean ---------------------------------------------------------------------

TEST_F(cli, CleanRemovesDeadSegmentsAndNeverALiveOne) {
  pid_t dead = DeadPid();
  SegmentWriter* live = CreateSegment("cleanlive");
  SegmentWriter* stale = CreateSegment("cleanstale", dead);
  SegmentWriter* exited = CreateSegment("cleanexited");
  ASSERT_NE(live, nullptr);
  ASSERT_NE(stale, nullptr);
  ASSERT_NE(exited, nullptr);
  exited->view().header()->owner_state.store(static_cast<uint32_t>(shm::OwnerState::kExited));
  std::string orphan = CreateRawObject("cleanorphan", dead, Garbage(8192));     // invalid, pid gone
  std::string unreadable = CreateRawObject("cleanbusy", getpid(), Garbage(8192));  // invalid, pid alive
  std::vector<std::string> mine = {live->object_name(), stale->object_name(), exited->object_name(), orphan,
                                   unreadable};

  std::vector<std::string> args = {"clean", "--dry-run"};
  args.insert(args.end(), mine.begin(), mine.end());
  CliResult dry = RunCli(args);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(dry.out, "would remove " + orphan + " (invalid, owner pid gone)\n" + "would remove " +
                         stale->object_name() + " (stale)\n" + "would remove 2 segments\n");
  for (const auto& object : mine) EXPECT_TRUE(ObjectExists(object)) << object;

  // Without names every segment is considered: ours are judged the same way.
  CliResult everything = RunCli({"clean", "--dry-run"});
  ASSERT_EQ(everything.exit_code, 0) << everything.err;
  EXPECT_NE(everything.out.find("would remove " + stale->object_name() + " (stale)\n"), std::string::npos);
  EXPECT_NE(everything.out.find("would remove " + orphan + " "), std::string::npos);
  EXPECT_EQ(everything.out.find(live->object_name()), std::string::npos);
  EXPECT_EQ(everything.out.find(exited->object_name()), std::string::npos);
  EXPECT_EQ(everything.out.find(unreadable), std::string::npos);

  args = {"clean"};
  args.insert(args.end(), mine.begin(), mine.end());
  CliResult cleaned = RunCli(args);
  ASSERT_EQ(cleaned.exit_code, 0) << cleaned.err;
  EXPECT_EQ(cleaned.err, "");
  EXPECT_NE(cleaned.out.find("removed " + stale->object_name() + " (stale)\n"), std::string::npos) << cleaned.out;
  EXPECT_NE(cleaned.out.find("removed " + orphan + " (invalid, owner pid gone)\n"), std::string::npos);
  EXPECT_EQ(Lines(cleaned.out).back(), "removed 2 segments");
  EXPECT_FALSE(ObjectExists(stale->object_name()));
  EXPECT_FALSE(ObjectExists(orphan));
  EXPECT_TRUE(ObjectExists(live->object_name()));
  EXPECT_TRUE(ObjectExists(exited->object_name()));
  EXPECT_TRUE(ObjectExists(unreadable));

  args = {"clean", "--exited"};
  args.insert(args.end(), mine.begin(), mine.end());
  CliResult with_exited = RunCli(args);
  ASSERT_EQ(with_exited.exit_code, 0) << with_exited.err;
  EXPECT_EQ(with_exited.out, "removed " + exited->object_name() + " (exited)\nremoved 1 segment\n");
  EXPECT_FALSE(ObjectExists(exited->object_name()));
  EXPECT_TRUE(ObjectExists(live->object_name()));
  EXPECT_TRUE(ObjectExists(unreadable));
}

// ---- broken segments and usage errors ------------------------------------------

TEST_F(cli, BrokenSegmentsFailWithOneLineAndStayListed) {
  SegmentWriter* good = CreateSegment("good");
  ASSERT_NE(good, nullptr);
  std::string garbage = CreateRawObject("garbage", getpid(), Garbage(16384));
  std::string tiny = CreateRawObject("tiny", getpid(), Garbage(100));
  std::string empty = CreateRawObject("empty", getpid(), "");
  SegmentWriter* future = CreateSegment("future");
  ASSERT_NE(future, nullptr);
  future->view().header()->version_major = 99;
  SegmentWriter* truncated = CreateSegment("truncated");
  ASSERT_NE(truncated, nullptr);
  int fd = shm_open(("/" + truncated->object_name()).c_str(), O_RDWR | O_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  close(fd);

  const std::pair<std::string, std::string> broken[] = {
      {garbage, "bad magic"},
      {tiny, "truncated: 100 bytes"},
      {empty, "truncated: 0 bytes"},
      {future->object_name(), "version 99." + std::to_string(limpwatch::shm::kVersionMinor)},
      {truncated->object_name(), "truncated: 8192 bytes"},
  };
  for (const auto& [object, reason] : broken) {
    SCOPED_TRACE(object);
    ExpectOneLineError(RunCli({"dump", object}), 1, reason);
    ExpectOneLineError(RunCli({"dump", object, "--json"}), 1, "segment '" + object + "'");
    ExpectOneLineError(RunCli({"top", object, "-n", "1", "-d", "0.01"}), 1, reason);
  }

  CliResult list = RunCli({"list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.err, "");
  EXPECT_NE(LineStartingWith(list.out, good->object_name()).find(" live "), std::string::npos) << list.out;
  for (const auto& [object, reason] : broken) {
    EXPECT_NE(LineStartingWith(list.out, object).find("invalid: " + reason), std::string::npos)
        << object << " in\n" << list.out;
  }

  CliResult list_json = RunCli({"list", "--json"});
  ASSERT_EQ(list_json.exit_code, 0) << list_json.err;
  Json listing;
  ASSERT_TRUE(ParseJson(list_json.out, &listing));
  for (const auto& segment : listing["segments"].items) {
    if (segment["object"].AsString() != garbage) continue;
    EXPECT_FALSE(segment["valid"].AsBool());
    EXPECT_EQ(segment["error"].AsString().rfind("bad magic", 0), 0u);
    EXPECT_EQ(segment["size"].AsUint(), 16384u);
  }
}

TEST_F(cli, UnknownSegmentIsOneLineError) {
  ExpectOneLineError(RunCli({"dump", UniqueName("nosuch")}), 1, UniqueName("nosuch"));
  ExpectOneLineError(RunCli({"top", UniqueName("nosuch")}), 1, UniqueName("nosuch"));
  // A well-formed object name that does not exist.
  ExpectOneLineError(RunCli({"dump", shm::SegmentObjectName(UniqueName("nosuch"), getpid())}), 1, "cannot open");
}

TEST_F(cli, UsageErrorsExitTwoWithOneLine) {
  SegmentWriter* writer = CreateSegment("usage");
  ASSERT_NE(writer, nullptr);
  const std::string& object = writer->object_name();
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{}, "no command"},
      {{"frobnicate"}, "unknown command 'frobnicate'"},
      {{"top"}, "missing segment NAME"},
      {{"top", object, "extra"}, "unexpected argument 'extra'"},
      {{"top", object, "-d"}, "needs a value"},
      {{"top", object, "-d", "abc"}, "bad delay 'abc'"},
      {{"top", object, "-d", "-1"}, "bad delay '-1'"},
      {{"top", object, "-d", "0"}, "bad delay '0'"},
      {{"top", object, "-d", "1e999"}, "bad delay '1e999'"},
      {{"top", object, "-d", "0.5s"}, "bad delay '0.5s'"},
      {{"top", object, "-n", "0"}, "bad iteration count '0'"},
      {{"top", object, "-n", "99999999999999999999"}, "bad iteration count"},
      {{"top", object, "-n", "+3"}, "bad iteration count '+3'"},
      {{"top", object, "--sort", "name"}, "bad sort key 'name'"},
      {{"top", object, "--limit", "-1"}, "bad limit '-1'"},
      {{"top", object, "--bogus"}, "unknown option '--bogus'"},
      {{"dump"}, "missing segment NAME"},
      {{"dump", object, "--json=yes"}, "unknown option '--json=yes'"},
      {{"list", "--verbose"}, "unknown option '--verbose'"},
      {{"list", "extra"}, "unexpected argument 'extra'"},
      {{"clean", "--force"}, "unknown option '--force'"},
      {{"help", "frobnicate"}, "unknown command 'frobnicate'"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(::testing::PrintToString(args));
    ExpectOneLineError(RunCli(args), 2, message);
  }
}

TEST_F(cli, HelpAndVersion) {
  for (const char* spelling : {"help", "--help", "-h"}) {
    CliResult result = RunCli({spelling});
    EXPECT_EQ(result.exit_code, 0) << spelling;
    EXPECT_EQ(result.err, "");
    for (const char* command : {"limpwatch list", "limpwatch top NAME", "limpwatch dump NAME", "limpwatch clean"}) {
      EXPECT_NE(result.out.find(command), std::string::npos) << spelling << " lacks " << command;
    }
  }
  CliResult top_help = RunCli({"top", "--help"});
  EXPECT_EQ(top_help.exit_code, 0);
  EXPECT_EQ(top_help.out.rfind("usage: limpwatch top NAME", 0), 0u) << top_help.out;
  EXPECT_NE(top_help.out.find("--sort"), std::string::npos);

  CliResult version = RunCli({"version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(std::regex_match(version.out, std::regex("limpwatch [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << version.out;
}

}  // namespace
}  // namespace limpwatch
