// request: the I/O operations that run to completion on a worker thread
// (fsync, size, truncate of a bstream). READ and WRITE go through flows and
// are driven by the state machine (request_state_machine.h).
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_IO_REQUESTS_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_IO_REQUESTS_H_

#include "common/message_codec.h"
#include "common/wire_format.h"
#include "server/server_context.h"

namespace limpwatch::testbed::request {

// 0 when `handle` is a datafile of this server, else EINVAL / ENOENT (the
// prelude of every I/O request, as in PVFS's io state machine).
int CheckDatafile(ServerContext* context, uint64_t handle);

int HandleFsync(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter* reply);
int HandleGetSize(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter* reply);
int HandleTruncate(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter* reply);

}  // namespace limpwatch::testbed::request

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_IO_REQUESTS_H_
