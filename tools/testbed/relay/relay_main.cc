// limpwatch-testbed-relay --upstream-port P [--listen-port 0] [--delay-ms 20]
//                         [--stall-ms 0 --stall-every-ms 0] [--mark M]
// Prints {"event":"listening","port":R} once it accepts connections.
#include <signal.h>

#include <atomic>
#include <cstdio>

#include "common/command_line.h"
#include "common/json_line.h"
#include "common/stop_signal.h"
#include "relay/delay_relay.h"

namespace limpwatch::testbed::relay {
namespace {

std::atomic<bool> stop_requested{false};

constexpr const char* kUsage =
    "usage: limpwatch-testbed-relay --upstream-port PORT [--listen-port PORT] [--delay-ms 20] [--stall-ms MS]\n"
    "                               [--stall-every-ms MS] [--mark MARK]\n"
    "  relays TCP connections on loopback to the upstream port, delaying (or stalling) their data\n";

int Main(int argc, char** argv) {
  if (AsksForHelp(argc, argv)) return AnswerHelp(kUsage);
  StopOnSignals(&stop_requested);
  signal(SIGPIPE, SIG_IGN);
  CommandLine flags;
  std::string error;
  uint64_t listen_port = 0, upstream_port = 0, delay_ms = 0, stall_ms = 0, stall_every_ms = 0, mark = 0;
  bool ok = flags.Parse(argc, argv, 1, {}, &error) && flags.GetUint("listen-port", 0, 0, 65535, &listen_port, &error) &&
            flags.GetUint("upstream-port", 0, 1, 65535, &upstream_port, &error) &&
            flags.GetUint("delay-ms", 20, 0, 60000, &delay_ms, &error) &&
            flags.GetUint("stall-ms", 0, 0, 600000, &stall_ms, &error) &&
            flags.GetUint("stall-every-ms", 0, 0, 600000, &stall_every_ms, &error) &&
            flags.GetUint("mark", 0, 0, UINT32_MAX, &mark, &error);
  if (ok && !flags.Has("upstream-port")) {
    error = "--upstream-port is required";
    ok = false;
  }
  if (ok) error = flags.ReportUnread("limpwatch-testbed-relay");
  if (!ok || !error.empty()) {
    std::fprintf(stderr, "limpwatch-testbed-relay: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  RelaySettings settings;
  settings.listen_port = static_cast<uint16_t>(listen_port);
  settings.upstream_port = static_cast<uint16_t>(upstream_port);
  settings.delay_ms = static_cast<uint32_t>(delay_ms);
  settings.stall_ms = static_cast<uint32_t>(stall_ms);
  settings.stall_every_ms = static_cast<uint32_t>(stall_every_ms);
  settings.mark = static_cast<uint32_t>(mark);
  DelayRelay relay(settings);
  if (!relay.Open(&error)) {
    EmitJsonLine(JsonLine().Add("event", "error").Add("error", error));
    return 1;
  }
  EmitJsonLine(JsonLine()
                   .Add("event", "listening")
                   .Add("port", uint64_t{relay.port()})
                   .Add("upstream_port", upstream_port)
                   .Add("delay_ms", delay_ms));
  relay.Run(&stop_requested);
  return 0;
}

}  // namespace
}  // namespace limpwatch::testbed::relay

int main(int argc, char** argv) { return limpwatch::testbed::relay::Main(argc, argv); }
