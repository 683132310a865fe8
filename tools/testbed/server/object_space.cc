#include "server/object_space.h"

#include <time.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "common/message_codec.h"

namespace limpwatch::testbed::trove {
namespace {

constexpr const char* kNextSequenceKey = "handle/next";

uint64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
}

std::string EncodeU64(uint64_t value) { return std::string(reinterpret_cast<const char*>(&value), sizeof value); }

}  // namespace

std::string ObjectSpace::AttributeKey(uint64_t handle) {
  char key[32];
  std::snprintf(key, sizeof key, "attr/%016" PRIx64, handle);
  return key;
}

std::string ObjectSpace::DirentKey(const std::string& name) { return "dirent/" + name; }

bool ObjectSpace::Load(std::string* error) {
  auto stored = keyval_->Get(kNextSequenceKey);
  if (!stored) return true;
  if (stored->size() != sizeof(uint64_t)) {
    *error = "keyval: malformed handle/next";
    return false;
  }
  std::memcpy(&next_sequence_, stored->data(), sizeof next_sequence_);
  return true;
}

int ObjectSpace::CreateObject(const ObjectAttributes& attributes, const std::string* dirent_name, uint64_t* handle) {
  std::lock_guard lock(mutex_);
  if (dirent_name != nullptr && keyval_->Get(DirentKey(*dirent_name))) return EEXIST;
  uint64_t new_handle = MakeHandle(server_index_, next_sequence_);
  PayloadWriter encoded;
  attributes.Encode(&encoded);
  std::vector<KeyvalChange> changes;
  changes.push_back({AttributeKey(new_handle), std::string(encoded.bytes().begin(), encoded.bytes().end())});
  if (dirent_name != nullptr) changes.push_back({DirentKey(*dirent_name), EncodeU64(new_handle)});
  changes.push_back({kNextSequenceKey, EncodeU64(next_sequence_ + 1)});
  int error = keyval_->Commit(changes);
  if (error != 0) return error;
  ++next_sequence_;
  *handle = new_handle;
  return 0;
}

int ObjectSpace::CreateDatafile(uint64_t* handle) {
  ObjectAttributes attributes;
  attributes.type = ObjectType::kDatafile;
  attributes.create_time_ns = RealtimeNs();
  return CreateObject(attributes, nullptr, handle);
}

int ObjectSpace::CreateMetafile(const std::string& name, const ObjectAttributes& attributes, uint64_t* handle) {
  ObjectAttributes stored = attributes;
  stored.type = ObjectType::kMetafile;
  stored.create_time_ns = RealtimeNs();
  return CreateObject(stored, &name, handle);
}

int ObjectSpace::LookupDirent(const std::string& name, uint64_t* handle) {
  auto stored = keyval_->Get(DirentKey(name));
  if (!stored || stored->size() != sizeof(uint64_t)) return ENOENT;
  std::memcpy(handle, stored->data(), sizeof *handle);
  return 0;
}

int ObjectSpace::GetAttributes(uint64_t handle, ObjectAttributes* attributes) {
  auto stored = keyval_->Get(AttributeKey(handle));
  if (!stored) return ENOENT;
  PayloadReader reader(reinterpret_cast<const uint8_t*>(stored->data()), stored->size());
  return attributes->Decode(&reader) ? 0 : EIO;
}

int ObjectSpace::RemoveMetafile(const std::string& name) {
  std::lock_guard lock(mutex_);
  uint64_t handle = 0;
  int error = LookupDirent(name, &handle);
  if (error != 0) return error;
  return keyval_->Commit({{DirentKey(name), std::nullopt}, {AttributeKey(handle), std::nullopt}});
}

int ObjectSpace::RemoveDatafile(uint64_t handle) {
  if (!keyval_->Get(AttributeKey(handle))) return ENOENT;
  int error = bstreams_->Remove(handle);
  if (error != 0) return error;
  return keyval_->Commit({{AttributeKey(handle), std::nullopt}});
}

}  // namespace limpwatch::testbed::trove
