// What every request state machine of one server reaches: its identity, its
// storage (trove), its scheduler (job) and its flow settings. Built once in
// main(); everything it points to outlives every request.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_SERVER_CONTEXT_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_SERVER_CONTEXT_H_

#include <cstdint>

#include "server/bstream_store.h"
#include "server/flow_settings.h"
#include "server/job_queue.h"
#include "server/keyval_store.h"
#include "server/object_space.h"
#include "server/slow_path_switch.h"
#include "server/storage_pool.h"

namespace limpwatch::testbed {

struct ServerContext {
  uint32_t server_index = 0;
  uint32_t server_count = 0;
  flow::FlowSettings flow_settings;
  trove::BstreamStore* bstreams = nullptr;
  trove::KeyvalStore* keyval = nullptr;
  trove::ObjectSpace* objects = nullptr;
  trove::StoragePool* storage = nullptr;
  job::JobQueue* jobs = nullptr;
  const SlowPathSwitch* slow_path = nullptr;
};

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_SERVER_CONTEXT_H_
