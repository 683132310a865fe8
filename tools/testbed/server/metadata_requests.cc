#include "server/metadata_requests.h"

#include <cerrno>

#include "server/slow_path_regression.h"

namespace limpwatch::testbed::request {
namespace {

constexpr size_t kMaxNameLength = 255;

bool ValidName(const std::string& name) {
  return !name.empty() && name.size() <= kMaxNameLength && name.find('/') == std::string::npos;
}

}  // namespace

int HandlePing(ServerContext* context, const FrameHeader&, PayloadReader*, PayloadWriter* reply) {
  reply->PutU32(context->server_index).PutU32(context->server_count);
  return 0;
}

int HandleCreateDatafile(ServerContext* context, const FrameHeader&, PayloadReader*, PayloadWriter* reply) {
  uint64_t handle = 0;
  int error = context->objects->CreateDatafile(&handle);
  if (error == 0) reply->PutU64(handle);
  return error;
}

int HandleCreateMetafile(ServerContext* context, const FrameHeader&, PayloadReader* payload, PayloadWriter* reply) {
  std::string name = payload->GetString();
  ObjectAttributes attributes;
  if (!attributes.Decode(payload) || !payload->ok() || !ValidName(name) || attributes.type != ObjectType::kMetafile) {
    return EINVAL;
  }
  if (uint64_t delay_us = context->slow_path != nullptr ? context->slow_path->create_delay_us() : 0) {
    SlowPathRegression(delay_us);
  }
  uint64_t handle = 0;
  int error = context->objects->CreateMetafile(name, attributes, &handle);
  if (error == 0) reply->PutU64(handle);
  return error;
}

int HandleLookup(ServerContext* context, const FrameHeader&, PayloadReader* payload, PayloadWriter* reply) {
  std::string name = payload->GetString();
  if (!payload->ok() || !ValidName(name)) return EINVAL;
  uint64_t handle = 0;
  int error = context->objects->LookupDirent(name, &handle);
  if (error == 0) reply->PutU64(handle);
  return error;
}

int HandleGetattr(ServerContext* context, const FrameHeader& header, PayloadReader*, PayloadWriter* reply) {
  if (!context->objects->Owns(header.handle)) return EINVAL;
  ObjectAttributes attributes;
  int error = context->objects->GetAttributes(header.handle, &attributes);
  if (error == 0) attributes.Encode(reply);
  return error;
}

int HandleRemoveMetafile(ServerContext* context, const FrameHeader&, PayloadReader* payload, PayloadWriter*) {
  std::string name = payload->GetString();
  if (!payload->ok() || !ValidName(name)) return EINVAL;
  return context->objects->RemoveMetafile(name);
}

int HandleRemoveDatafile(ServerContext* context, const FrameHeader& header, PayloadReader*, PayloadWriter*) {
  if (!context->objects->Owns(header.handle)) return EINVAL;
  return context->objects->RemoveDatafile(header.handle);
}

}  // namespace limpwatch::testbed::request
