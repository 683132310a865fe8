// limpwatch-testbed-hog disk --device DEV [--block-kib 4096]
// limpwatch-testbed-hog cpu [--cpu K]
// limpwatch-testbed-hog memory --mib N [--rate-mibps 512]
// limpwatch-testbed-hog fill --ballast FILE [--poll-ms 5]
#include <cstdio>
#include <string>

#include "common/command_line.h"
#include "common/stop_signal.h"
#include "hog/hog.h"

namespace limpwatch::testbed::hog {

std::atomic<bool> stop_requested{false};

namespace {

constexpr const char* kUsage =
    "usage: limpwatch-testbed-hog disk --device DEV [--block-kib 4096] | cpu [--cpu K] |"
    " memory --mib N [--rate-mibps 512] | fill --ballast FILE [--poll-ms 5]\n";

int Usage(const std::string& error) {
  std::fprintf(stderr, "limpwatch-testbed-hog: %s\n%s", error.c_str(), kUsage);
  return 2;
}

int Main(int argc, char** argv) {
  if (AsksForHelp(argc, argv)) return AnswerHelp(kUsage);
  StopOnSignals(&stop_requested);
  CommandLine flags;
  std::string error;
  if (!flags.Parse(argc, argv, 1, {}, &error)) return Usage(error);
  if (flags.positional().size() != 1) return Usage("one of disk, cpu, memory, fill");
  const std::string& kind = flags.positional()[0];
  uint64_t block_kib = 0, cpu = 0, mib = 0, rate = 0;
  if (kind == "disk") {
    std::string device = flags.GetString("device", "");
    if (device.empty() || !flags.GetUint("block-kib", 4096, 4, 1 << 20, &block_kib, &error)) {
      return Usage(error.empty() ? "disk needs --device" : error);
    }
    return RunDiskReader(device, block_kib << 10);
  }
  if (kind == "cpu") {
    if (flags.GetString("cpu", "").empty()) return RunCpuSpinner(-1);
    if (!flags.GetUint("cpu", 0, 0, 4095, &cpu, &error)) return Usage(error);
    return RunCpuSpinner(static_cast<int>(cpu));
  }
  if (kind == "memory") {
    if (!flags.GetUint("mib", 1024, 1, 1 << 20, &mib, &error) ||
        !flags.GetUint("rate-mibps", 512, 1, 1 << 20, &rate, &error)) {
      return Usage(error);
    }
    return RunMemoryGrower(mib, rate);
  }
  if (kind == "fill") {
    std::string ballast = flags.GetString("ballast", "");
    uint64_t poll_ms = 0;
    if (ballast.empty() || !flags.GetUint("poll-ms", 5, 1, 10000, &poll_ms, &error)) {
      return Usage(error.empty() ? "fill needs --ballast" : error);
    }
    return RunSpaceFiller(ballast, poll_ms);
  }
  return Usage("unknown hog " + kind);
}

}  // namespace
}  // namespace limpwatch::testbed::hog

int main(int argc, char** argv) { return limpwatch::testbed::hog::Main(argc, argv); }
