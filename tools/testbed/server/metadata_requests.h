// request: the metadata operations, each run to completion on a worker
// thread (their cost is the keyval commit and its fdatasync). Each reads the
// request payload and appends its reply fields to *reply; each returns 0 or
// the errno the client receives as the response status.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_METADATA_REQUESTS_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_METADATA_REQUESTS_H_

#include "common/message_codec.h"
#include "common/wire_format.h"
#include "server/server_context.h"

namespace limpwatch::testbed::request {

int HandlePing(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter* reply);
int HandleCreateDatafile(ServerContext* context, const FrameHeader& header, PayloadReader* payload,
                         PayloadWriter* reply);
int HandleCreateMetafile(ServerContext* context, const FrameHeader& header, PayloadReader* payload,
                         PayloadWriter* reply);
int HandleLookup(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter* reply);
int HandleGetattr(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter* reply);
int HandleRemoveMetafile(ServerContext* context, const FrameHeader& header, PayloadReader* payload,
                         PayloadWriter* reply);
int HandleRemoveDatafile(ServerContext* context, const FrameHeader& header, PayloadReader* payload,
                         PayloadWriter* reply);

}  // namespace limpwatch::testbed::request

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_METADATA_REQUESTS_H_
