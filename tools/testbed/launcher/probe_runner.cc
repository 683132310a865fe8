#include "launcher/probe_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "common/json_line.h"
#include "common/socket_util.h"
#include "launcher/process_control.h"
#include "launcher/stop_flag.h"

namespace limpwatch::testbed::launcher {

ProbeResult RunProbe(const ProbeSettings& settings) {
  ProbeResult result;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.status = "pipe failed";
    return result;
  }
  SpawnOptions options;
  options.program = settings.tools_dir + "/limpwatch-testbed-client";
  options.arguments = {"--config",
                       settings.config_path,
                       "--timeout-ms",
                       std::to_string(settings.request_timeout_ms),
                       "probe",
                       "--server",
                       std::to_string(settings.server),
                       "--size-mib",
                       std::to_string(settings.size_mib),
                       "--small-files",
                       std::to_string(settings.small_files),
                       "--seconds",
                       std::to_string(settings.seconds)};
  options.set_environment = {"LIMPWATCH_DISABLE=1"};  // the probe is a tool, not a traced client
  options.stdout_pipe = pipe_fds[1];
  std::string error;
  pid_t pid = SpawnProcess(options, &error);
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    result.status = error;
    return result;
  }
  uint64_t start = ProcessStartTime(pid);
  uint64_t deadline = MonotonicNs() + uint64_t(settings.overall_timeout_ms) * 1000000;
  std::string output;
  char buffer[4096];
  for (;;) {
    if (StopRequested() || MonotonicNs() >= deadline) {
      result.status = StopRequested() ? "interrupted" : "probe timed out";
      break;
    }
    pollfd poll_fd{pipe_fds[0], POLLIN, 0};
    if (poll(&poll_fd, 1, 100) <= 0) continue;
    ssize_t count = read(pipe_fds[0], buffer, sizeof buffer);
    if (count <= 0) break;
    output.append(buffer, static_cast<size_t>(count));
  }
  close(pipe_fds[0]);
  StopProcess(pid, start, 5000);
  size_t at = output.rfind("{\"event\":\"probe\"");
  if (at == std::string::npos) {
    if (result.status.empty()) result.status = "the probe printed no result";
    return result;
  }
  result.line = output.substr(at, output.find('\n', at) - at);
  result.completed = true;
  result.status = JsonStringField(result.line, "status").value_or("unknown");
  result.ping_us = JsonNumberField(result.line, "ping_us").value_or(0);
  result.write_mib_per_s = JsonNumberField(result.line, "write_mib_per_s").value_or(0);
  result.read_mib_per_s = JsonNumberField(result.line, "read_mib_per_s").value_or(0);
  result.meta_ops_per_s = JsonNumberField(result.line, "meta_ops_per_s").value_or(0);
  return result;
}

std::string CompareProbes(const ProbeResult& before, const ProbeResult& after) {
  JsonLine comparison;
  comparison.AddRaw("before", before.completed ? before.line : "null");
  comparison.AddRaw("after", after.completed ? after.line : "null");
  if (!after.completed || after.status != "ok") comparison.Add("after_status", after.status);
  auto ratio = [&](const char* key, double was, double now) {
    if (was > 0 && now > 0) comparison.Add(key, was / now);
  };
  ratio("write_slowdown", before.write_mib_per_s, after.write_mib_per_s);
  ratio("read_slowdown", before.read_mib_per_s, after.read_mib_per_s);
  ratio("meta_slowdown", before.meta_ops_per_s, after.meta_ops_per_s);
  ratio("ping_slowdown", after.ping_us, before.ping_us);
  return comparison.str();
}

}  // namespace limpwatch::testbed::launcher
