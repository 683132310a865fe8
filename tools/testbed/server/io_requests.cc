#include "server/io_requests.h"

#include <cerrno>

namespace limpwatch::testbed::request {

int CheckDatafile(ServerContext* context, uint64_t handle) {
  if (!context->objects->Owns(handle)) return EINVAL;
  ObjectAttributes attributes;
  int error = context->objects->GetAttributes(handle, &attributes);
  if (error != 0) return error;
  return attributes.type == ObjectType::kDatafile ? 0 : EISDIR;
}

int HandleFsync(ServerContext* context, const FrameHeader& header, PayloadReader*, PayloadWriter*) {
  int error = CheckDatafile(context, header.handle);
  return error != 0 ? error : context->bstreams->Sync(header.handle);
}

int HandleGetSize(ServerContext* context, const FrameHeader& header, PayloadReader*, PayloadWriter* reply) {
  int error = CheckDatafile(context, header.handle);
  if (error != 0) return error;
  uint64_t size = 0;
  error = context->bstreams->GetSize(header.handle, &size);
  if (error == 0) reply->PutU64(size);
  return error;
}

int HandleTruncate(ServerContext* context, const FrameHeader& header, PayloadReader* payload, PayloadWriter*) {
  uint64_t size = payload->GetU64();
  if (!payload->ok()) return EINVAL;
  int error = CheckDatafile(context, header.handle);
  return error != 0 ? error : context->bstreams->Truncate(header.handle, size);
}

}  // namespace limpwatch::testbed::request
