// limpwatch-testbed-delayer --queue N [--delay-ms 20]
// Holds every packet the firewall sends to netfilter queue N for --delay-ms.
// Prints {"event":"ready","queue":N} once the queue is bound, and
// {"event":"stopped","delayed":K} after SIGTERM / SIGINT, when every packet
// still held has been let through.
#include <atomic>
#include <cstdio>

#include "common/command_line.h"
#include "common/json_line.h"
#include "common/stop_signal.h"
#include "relay/packet_delayer.h"

namespace limpwatch::testbed::relay {
namespace {

std::atomic<bool> stop_requested{false};

constexpr const char* kUsage =
    "usage: limpwatch-testbed-delayer --queue NUM [--delay-ms 20]\n"
    "  holds every packet of netfilter queue NUM for the delay, then lets it through\n";

int Main(int argc, char** argv) {
  if (AsksForHelp(argc, argv)) return AnswerHelp(kUsage);
  StopOnSignals(&stop_requested);
  CommandLine flags;
  std::string error;
  uint64_t queue = 0, delay_ms = 0;
  bool ok = flags.Parse(argc, argv, 1, {}, &error) && flags.GetUint("queue", 0, 0, 65535, &queue, &error) &&
            flags.GetUint("delay-ms", 20, 0, 60000, &delay_ms, &error);
  if (ok && !flags.Has("queue")) {
    error = "--queue is required";
    ok = false;
  }
  if (ok) error = flags.ReportUnread("limpwatch-testbed-delayer");
  if (!ok || !error.empty()) {
    std::fprintf(stderr, "limpwatch-testbed-delayer: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  PacketDelayer delayer(static_cast<uint16_t>(queue), static_cast<uint32_t>(delay_ms));
  if (!delayer.Open(&error)) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", error));
    return 1;
  }
  EmitJsonLine(JsonLine().Add("event", "ready").Add("queue", queue).Add("delay_ms", delay_ms));
  bool ran = delayer.Run(&stop_requested, &error);
  JsonLine stopped;
  stopped.Add("event", ran ? "stopped" : "error").Add("delayed", delayer.delayed());
  if (!ran) stopped.Add("error", error);
  EmitJsonLine(stopped);
  return ran ? 0 : 1;
}

}  // namespace
}  // namespace limpwatch::testbed::relay

int main(int argc, char** argv) { return limpwatch::testbed::relay::Main(argc, argv); }
