// Fuzz target for the readers of LIMPWATCH_* environment values: the
// runtime's (runtime/src/config.h: flags, names, bounded numbers, the
// service interval), the sampler's (runtime/src/sampler/sampler_config.h),
// the analyzer's (analyzer/analyzer_config.h: numbers, factors, windows,
// names of rules and distances), the peer configuration's
// (analyzer/peer_config.h: the list, port offset, per-alias ports, bind
// address, self), the I/O interposers' (hooks/src/io_settings.h: the fd
// table's size, the timing policy) and the recording path's %n / %p.
//
// An input is lines of NAME=value. Only the variables listed below are set
// (every other line is ignored, so an input cannot reach the sanitizers'
// or the C library's own settings), each to the value of its last line;
// the rest are unset. LIMPWATCH_PVFS_CONFIG names a fixed fs.conf whatever
// its value says: the value is a path, and the file's reader has a target
// of its own. Host names are looked up in /etc/hosts only (fuzz_support.h).
//
// Invariants, for every input:
//   - every problem the runtime, sampler and analyzer report begins with
//     the name of a variable the input set;
//   - whatever the values, the settings are within their documented
//     bounds: a geometry a segment can be laid out with, a service interval
//     of 10-1000 ms, a sampling rate of at most 10 kHz, analyzer windows no
//     shorter than their shift, factors of at least 1, an fd table of 16
//     to 65536 entries;
//   - a variable not set keeps its default;
//   - an accepted LIMPWATCH_NAME names a segment object that parses back
//     to it;
//   - the peer configuration never throws, and this server, when found, is
//     one of the configured servers; in a cluster of one group its group is
//     every other server, and its peers are those whose host name was
//     looked up (an error line for each that was not);
//   - a recording path without '%' is taken as it is.
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config.h"
#include "io_settings.h"
#include "fuzz_support.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/peer_config.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/segment.h"
#include "sampler/sampler_config.h"

namespace limpwatch::fuzzing {
namespace {

void Check(bool condition, const char* invariant) { Require(condition, "environment", invariant); }

constexpr std::array<std::string_view, 39> kVariables = {
    "LIMPWATCH_DISABLE",
    "LIMPWATCH_KEEP",
    "LIMPWATCH_QUIET",
    "LIMPWATCH_PATCH",
    "LIMPWATCH_NAME",
    "LIMPWATCH_CLOCK",
    "LIMPWATCH_MAX_FUNCTIONS",
    "LIMPWATCH_MAX_THREADS",
    "LIMPWATCH_STACK_DEPTH",
    "LIMPWATCH_SERVICE_INTERVAL_MS",
    "LIMPWATCH_SAMPLE_HZ",
    "LIMPWATCH_SAMPLE_SYSTEM",
    "LIMPWATCH_SAMPLE_EVENTS",
    "LIMPWATCH_ANALYZE_RULE",
    "LIMPWATCH_ANALYZE_BUDGET",
    "LIMPWATCH_ANALYZE_TICK_MS",
    "LIMPWATCH_ANALYZE_WINDOW",
    "LIMPWATCH_ANALYZE_SHIFT",
    "LIMPWATCH_ANALYZE_K",
    "LIMPWATCH_ANALYZE_WARMUP",
    "LIMPWATCH_ANALYZE_MIN_SAMPLES",
    "LIMPWATCH_ANALYZE_MIN_TIME_MS",
    "LIMPWATCH_ANALYZE_MAX_FEATURES",
    "LIMPWATCH_ANALYZE_SUPPRESS_S",
    "LIMPWATCH_ANALYZE_SILENT_WINDOWS",
    "LIMPWATCH_ANALYZE_FACTOR",
    "LIMPWATCH_ANALYZE_RELATIVE",
    "LIMPWATCH_ANALYZE_CPUWAIT_RELATIVE",
    "LIMPWATCH_ANALYZE_DISTANCE",
    "LIMPWATCH_ANALYZE_VARIANCE_WEIGHTING",
    "LIMPWATCH_PEERS",
    "LIMPWATCH_PVFS_CONFIG",
    "LIMPWATCH_SELF",
    "LIMPWATCH_PEER_PORT_OFFSET",
    "LIMPWATCH_PEER_PORTS",
    "LIMPWATCH_PEER_BIND",
    "LIMPWATCH_RECORD",
    "LIMPWATCH_FD_TABLE_SIZE",
    "LIMPWATCH_IO_TIMING",
};

constexpr const char* kFsConf =
    "<Defaults>\n\tLogType file\n</Defaults>\n"
    "<Aliases>\n"
    "\tAlias server1 tcp://127.0.0.1:3334\n"
    "\tAlias server2 tcp://127.0.0.2:3334\n"
    "\tAlias server3 tcp://localhost:3335\n"
    "</Aliases>\n";

// The environment the readers see. putenv with strings kept here, rather
// than setenv: glibc keeps every value setenv was ever given, which over
// millions of inputs is memory without end.
class Environment {
 public:
  // The values of the listed variables the input sets; empty when unset.
  const std::array<std::string, kVariables.size()>& Apply(const std::string& input, const std::string& pvfs_config) {
    for (std::string& value : values_) value.clear();
    std::array<bool, kVariables.size()> set{};
    std::string_view rest = input;
    while (!rest.empty()) {
      size_t newline = rest.find('\n');
      std::string_view line = rest.substr(0, newline);
      rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
      size_t equals = line.find('=');
      if (equals == std::string_view::npos) continue;
      for (size_t index = 0; index < kVariables.size(); ++index) {
        if (line.substr(0, equals) != kVariables[index]) continue;
        values_[index] = std::string(line.substr(equals + 1));
        set[index] = true;
      }
    }
    for (size_t index = 0; index < kVariables.size(); ++index) {
      std::string name(kVariables[index]);
      if (name == "LIMPWATCH_PVFS_CONFIG" && set[index]) values_[index] = pvfs_config;
      // A NUL ends the value, as it would in a real environment.
      values_[index].resize(std::string_view(values_[index].c_str()).size());
      // Out of the environment before its string changes: glibc reads every
      // entry when it looks one up.
      unsetenv(name.c_str());
      if (!set[index]) continue;
      entries_[index] = name + "=" + values_[index];
      putenv(entries_[index].data());
    }
    return values_;
  }

 private:
  std::array<std::string, kVariables.size()> values_;
  std::array<std::string, kVariables.size()> entries_;
};

size_t IndexOf(std::string_view variable) {
  for (size_t index = 0; index < kVariables.size(); ++index) {
    if (kVariables[index] == variable) return index;
  }
  __builtin_trap();
}

}  // namespace
}  // namespace limpwatch::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch;
  using namespace limpwatch::fuzzing;
  ResolveNamesFromHostsFileOnly();
  static InputFile fs_conf;
  static const std::string& fs_conf_path = fs_conf.Write(std::string(kFsConf));
  static Environment environment;
  const auto& values = environment.Apply(Text(std::span(data, size)), fs_conf_path);
  // Set: present in the environment, even when empty (the readers treat
  // an empty value as unset, which the default checks below allow for).
  auto given = [&values](std::string_view variable) { return !values[IndexOf(variable)].empty(); };

  std::vector<std::string> problems;
  runtime::RuntimeConfig runtime_config = runtime::ReadConfigFromEnvironment(&problems);
  runtime::SamplerConfig sampler = runtime::ReadSamplerConfig(&problems);
  analyzer::AnalyzerConfig analyzer_config = analyzer::ReadAnalyzerConfigFromEnvironment(&problems);
  constexpr uint32_t kTableEntries = 65536;
  hooks::IoSettings io_settings = hooks::ReadIoSettings(kTableEntries, &problems);
  for (const std::string& problem : problems) {
    bool named = false;
    for (size_t index = 0; index < kVariables.size(); ++index) {
      named = named || (!values[index].empty() && problem.compare(0, kVariables[index].size(), kVariables[index]) == 0);
    }
    Check(named, "a problem begins with the name of a variable the input set");
  }

  shm::Layout layout;
  Check(shm::ComputeLayout(runtime_config.geometry, &layout), "the geometry can be laid out");
  Check(runtime_config.geometry.max_functions >= 16, "at least 16 functions");
  Check(runtime_config.geometry.stack_depth >= 8, "a stack at least 8 deep");
  Check(runtime_config.service_interval_ms >= 10 && runtime_config.service_interval_ms <= 1000,
        "a service interval of 10-1000 ms");
  shm::Geometry defaults;
  if (!given("LIMPWATCH_MAX_FUNCTIONS")) {
    Check(runtime_config.geometry.max_functions == defaults.max_functions, "the default function table");
  }
  if (!given("LIMPWATCH_MAX_THREADS")) {
    Check(runtime_config.geometry.max_threads == defaults.max_threads, "the default thread slots");
  }
  if (!given("LIMPWATCH_STACK_DEPTH")) {
    Check(runtime_config.geometry.stack_depth == defaults.stack_depth, "the default stack depth");
  }
  if (!given("LIMPWATCH_DISABLE")) Check(!runtime_config.disabled, "enabled by default");
  if (!runtime_config.name.empty()) {
    Check(shm::IsValidSegmentName(runtime_config.name), "an accepted name is a valid segment name");
    auto parts = shm::ParseSegmentObjectName(shm::SegmentObjectName(runtime_config.name, 4242));
    Check(parts && parts->name == runtime_config.name && parts->pid == 4242, "its object name parses back to it");
  }

  Check(io_settings.fd_table_size >= hooks::kMinFdTableSize && io_settings.fd_table_size <= kTableEntries,
        "an fd table of 16 to 65536 entries");
  if (!given("LIMPWATCH_FD_TABLE_SIZE")) Check(io_settings.fd_table_size == kTableEntries, "the whole fd table");
  Check(io_settings.time_every_call == (values[IndexOf("LIMPWATCH_IO_TIMING")] == "every"),
        "every call timed only when asked for by name");

  Check(sampler.rate_hz <= runtime::kMaxSampleHz, "a sampling rate of at most 10 kHz");
  if (!given("LIMPWATCH_SAMPLE_HZ")) Check(sampler.rate_hz == runtime::kDefaultSampleHz, "the default rate");

  const analyzer::AnalyzerConfig analyzer_defaults;
  Check(analyzer_config.tick_ms >= 100 && analyzer_config.tick_ms <= 60000, "a tick of 100 ms to a minute");
  Check(analyzer_config.window_ticks >= 1 && analyzer_config.shift_ticks >= 1, "windows and shifts of a tick or more");
  Check(analyzer_config.shift_ticks <= analyzer_config.window_ticks, "a shift no longer than its window");
  Check(analyzer_config.k >= 1 && analyzer_config.k <= 50, "k of 1-50");
  Check(analyzer_config.max_features >= 1 && analyzer_config.max_features <= 1000, "1-1000 features");
  Check(analyzer_config.server_days_per_false_alarm >= 1, "a budget of at least a server-day");
  Check(analyzer_config.default_threshold_factor > 1 && analyzer_config.relative_factor >= 1 &&
            analyzer_config.cpu_wait_relative_factor >= 1,
        "factors of at least 1");
  if (!given("LIMPWATCH_ANALYZE_TICK_MS")) Check(analyzer_config.tick_ms == analyzer_defaults.tick_ms, "default tick");
  if (!given("LIMPWATCH_ANALYZE_RULE")) {
    Check(analyzer_config.decision_rule == analyzer_defaults.decision_rule, "the default rule");
  }

  analyzer::PeerConfig peers = analyzer::LoadPeerConfig(analyzer::PeerConfigSources::FromEnvironment());
  for (const std::string& error : peers.errors) Check(error.find('\n') == std::string::npos, "peer errors are lines");
  if (peers.self) Check(*peers.self < peers.servers.size(), "this server is a configured one");
  size_t unresolved = 0;
  for (size_t index : peers.PeerIndexes()) unresolved += !peers.servers[index].resolved;
  Check(peers.Peers().size() + unresolved == peers.PeerIndexes().size(),
        "the peers are the group's members whose host was looked up");
  if (!peers.self_missing) Check(unresolved <= peers.errors.size(), "each one that was not is an error line");
  if (peers.servers.size() <= peers.group_size + 1) {
    Check(peers.PeerIndexes().size() + (peers.self ? 1 : 0) == peers.servers.size(), "the group is the others");
  }

  const std::string& record = values[IndexOf("LIMPWATCH_RECORD")];
  std::string expanded = analyzer::ExpandRecordPath(record, "server1", 4242);
  if (record.find('%') == std::string::npos) Check(expanded == record, "a path without '%' is kept");
  return 0;
}
