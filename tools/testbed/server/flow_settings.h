// flow: how a flow pipelines its transfer. PVFS's flow protocol moves a
// request's bytes between BMI and trove through a few fixed-size buffers, so
// the network fills one buffer while the disk writes another.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_FLOW_SETTINGS_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_FLOW_SETTINGS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "server/bmi_connection.h"
#include "server/storage_pool.h"

namespace limpwatch::testbed::flow {

struct FlowSettings {
  size_t buffer_size = 1024 * 1024;  // FlowBufferSizeBytes
  uint32_t buffers_per_flow = 4;     // FlowBuffersPerFlow
};

// What a flow moves: `length` bytes at `offset` of datafile `handle`, over
// the bulk transfer `tag` of `connection`.
struct FlowRequest {
  std::shared_ptr<bmi::Connection> connection;
  uint32_t tag = 0;
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  FlowSettings settings;
  trove::StoragePool* storage = nullptr;
  // Runs once, on whichever thread finished the flow.
  std::function<void()> on_complete;
};

// How many buffers a flow of `length` bytes uses, and how big each is (no
// bigger than the transfer: a 4 KiB write does not allocate 4 x 1 MiB).
inline size_t FlowBufferCount(const FlowRequest& request) {
  uint64_t chunks = (request.length + request.settings.buffer_size - 1) / request.settings.buffer_size;
  return static_cast<size_t>(std::min<uint64_t>(chunks, request.settings.buffers_per_flow));
}
inline size_t FlowBufferCapacity(const FlowRequest& request) {
  return static_cast<size_t>(std::min<uint64_t>(request.length, request.settings.buffer_size));
}

}  // namespace limpwatch::testbed::flow

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_FLOW_SETTINGS_H_
