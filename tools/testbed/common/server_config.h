// The test-bed's file-system configuration, written as a PVFS-style fs.conf:
//
//   <Defaults>
//       FlowBufferSizeBytes 1048576
//       FlowBuffersPerFlow 4
//       WorkerThreads 4
//       StorageThreads 2
//   </Defaults>
//   <Aliases>
//       Alias server0 tcp://127.0.0.1:4000
//       Alias server1 tcp://127.0.0.1:4001
//   </Aliases>
//   <ServerOptions>
//       Server server0
//       StorageSpace /path/to/server0
//   </ServerOptions>
//   <Filesystem>
//       Name limpwatch-testbed
//       <StorageHints>
//           TroveMethod directio          (or "buffered")
//           TroveSyncMeta yes
//       </StorageHints>
//       <Distribution>
//           Name simple_stripe
//           Param strip_size
//           Value 1048576
//       </Distribution>
//   </Filesystem>
//
// Every server and client reads the same file; a server finds itself by its
// alias. The peers list (host:port,...) is the same addresses in the form
// LIMPWATCH_PEERS takes.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_SERVER_CONFIG_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_SERVER_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::testbed {

struct ServerAlias {
  std::string name;  // server0, server1, ...
  std::string host;  // always 127.0.0.1 in the test-bed
  uint16_t port = 0;
  std::string storage_space;
};

struct TestbedConfig {
  std::string file_system_name = "limpwatch-testbed";
  std::vector<ServerAlias> servers;
  uint32_t flow_buffer_size = 1024 * 1024;
  uint32_t flow_buffers_per_flow = 4;
  uint32_t worker_threads = 4;
  uint32_t storage_threads = 2;
  uint32_t stripe_size = 1024 * 1024;
  bool direct_io = true;
  bool sync_metadata = true;

  // Index of the alias named `name`, or -1.
  int FindServer(const std::string& name) const;
};

// Flow buffers and stripes: 4 KiB multiples (O_DIRECT alignment) within these bounds.
inline constexpr uint32_t kMinFlowBufferSize = 64 * 1024;
inline constexpr uint32_t kMaxFlowBufferSize = 4 * 1024 * 1024;
inline constexpr uint32_t kMinStripeSize = 64 * 1024;
inline constexpr uint32_t kMaxStripeSize = 4 * 1024 * 1024;

std::string FormatConfigFile(const TestbedConfig& config);

// Parses fs.conf text; on failure returns false with "line N: reason".
bool ParseConfigFile(const std::string& text, TestbedConfig* config, std::string* error);
bool LoadConfigFile(const std::string& path, TestbedConfig* config, std::string* error);

// "127.0.0.1:4000,127.0.0.1:4001,..." in server order.
std::string PeersList(const TestbedConfig& config);

// Checks the values a server and client depend on (sizes, counts, ports).
bool ValidateConfig(const TestbedConfig& config, std::string* error);

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_SERVER_CONFIG_H_
