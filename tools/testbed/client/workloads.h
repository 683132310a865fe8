// The client's commands: seed 000's five workloads (ddw, ddr, iozonew,
// iozoner, postmark), scaled to a 2-core machine with one disk, the network
// hogs and the probe the fault injectors use, and plain file commands.
// Each returns the process exit status (0 ok, 1 errors, 2 bad usage).
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_WORKLOADS_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_WORKLOADS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "client/file_system.h"

namespace limpwatch::testbed::client {

struct WorkloadSettings {
  std::string file;           // --file: name in the test-bed (default: <workload>-<pid>)
  uint64_t size_bytes = 0;    // --size-mib
  uint64_t record_bytes = 0;  // --record-kib (default: one stripe per server)
  uint32_t stripe_size = 0;   // --stripe-kib (default: fs.conf's strip_size)
  double seconds = 0;         // --seconds: repeat passes this long (0: one pass)
  bool keep = false;          // --keep: leave the file in the test-bed
  bool one_server = false;    // --one-server (put): everything on the name's metadata server
  // postmark
  uint64_t files = 200;         // --files
  uint64_t transactions = 500;  // --transactions
  uint64_t min_size = 512;      // --min-size
  uint64_t max_size = 16384;    // --max-size
  uint64_t seed = 1;            // --seed
  // probe and network hogs
  int64_t server = -1;                 // --server
  uint64_t streams = 2;                // --streams
  uint64_t small_files = 20;           // --small-files
  std::vector<std::string> arguments;  // positional words after the command
};

struct WorkloadContext {
  TestbedFileSystem* fs = nullptr;
  const std::atomic<bool>* interrupted = nullptr;
  int timeout_ms = 10000;
};

int RunDdw(const WorkloadContext& context, const WorkloadSettings& settings);
int RunDdr(const WorkloadContext& context, const WorkloadSettings& settings);
int RunIozoneWrite(const WorkloadContext& context, const WorkloadSettings& settings);
int RunIozoneRead(const WorkloadContext& context, const WorkloadSettings& settings);
int RunPostmark(const WorkloadContext& context, const WorkloadSettings& settings);

int RunProbe(const WorkloadContext& context, const WorkloadSettings& settings);
int RunWriteNetworkHog(const WorkloadContext& context, const WorkloadSettings& settings);
int RunReadNetworkHog(const WorkloadContext& context, const WorkloadSettings& settings);

int RunPut(const WorkloadContext& context, const WorkloadSettings& settings);
int RunGet(const WorkloadContext& context, const WorkloadSettings& settings);
int RunStat(const WorkloadContext& context, const WorkloadSettings& settings);
int RunRemove(const WorkloadContext& context, const WorkloadSettings& settings);
int RunPing(const WorkloadContext& context, const WorkloadSettings& settings);

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_WORKLOADS_H_
