#include "common/object_attributes.h"

namespace limpwatch::testbed {

void ObjectAttributes::Encode(PayloadWriter* writer) const {
  writer->PutU32(static_cast<uint32_t>(type));
  writer->PutU32(stripe_size);
  writer->PutU64(create_time_ns);
  writer->PutU32(static_cast<uint32_t>(datafiles.size()));
  for (uint64_t handle : datafiles) writer->PutU64(handle);
}

bool ObjectAttributes::Decode(PayloadReader* reader) {
  uint32_t raw_type = reader->GetU32();
  stripe_size = reader->GetU32();
  create_time_ns = reader->GetU64();
  uint32_t count = reader->GetU32();
  if (!reader->ok() || count > kMaxDatafiles) return false;
  if (raw_type != static_cast<uint32_t>(ObjectType::kMetafile) &&
      raw_type != static_cast<uint32_t>(ObjectType::kDatafile)) {
    return false;
  }
  type = static_cast<ObjectType>(raw_type);
  datafiles.clear();
  for (uint32_t i = 0; i < count; ++i) datafiles.push_back(reader->GetU64());
  if (!reader->ok()) return false;
  if (type == ObjectType::kMetafile && (stripe_size == 0 || datafiles.empty())) return false;
  return true;
}

}  // namespace limpwatch::testbed
