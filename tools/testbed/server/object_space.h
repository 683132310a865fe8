// trove dspace: objects (handles and their attributes) and directory
// entries, kept in the keyval store.
//
//   "handle/next"     -> the next handle sequence of this server
//   "attr/<handle>"   -> ObjectAttributes of a metafile or datafile
//   "dirent/<name>"   -> the metafile handle a file name resolves to
//
// Each change is one keyval commit (synced): creating a file costs a synced
// metadata write on its metadata server, as in PVFS.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_OBJECT_SPACE_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_OBJECT_SPACE_H_

#include <cstdint>
#include <mutex>
#include <string>

#include "common/object_attributes.h"
#include "server/bstream_store.h"
#include "server/keyval_store.h"

namespace limpwatch::testbed::trove {

class ObjectSpace {
 public:
  ObjectSpace(uint32_t server_index, KeyvalStore* keyval, BstreamStore* bstreams)
      : server_index_(server_index), keyval_(keyval), bstreams_(bstreams) {}

  // Reads the handle sequence back from the keyval store.
  bool Load(std::string* error);

  // Each returns 0 or an errno.
  int CreateDatafile(uint64_t* handle);
  int CreateMetafile(const std::string& name, const ObjectAttributes& attributes, uint64_t* handle);  // EEXIST
  int LookupDirent(const std::string& name, uint64_t* handle);                                        // ENOENT
  int GetAttributes(uint64_t handle, ObjectAttributes* attributes);                                   // ENOENT
  int RemoveMetafile(const std::string& name);  // its dirent and attributes
  int RemoveDatafile(uint64_t handle);          // its attributes and bstream

  // Whether `handle` belongs to this server's handle range.
  bool Owns(uint64_t handle) const { return ServerOfHandle(handle) == int64_t{server_index_}; }

 private:
  static std::string AttributeKey(uint64_t handle);
  static std::string DirentKey(const std::string& name);
  int CreateObject(const ObjectAttributes& attributes, const std::string* dirent_name, uint64_t* handle);

  uint32_t server_index_;
  KeyvalStore* keyval_;
  BstreamStore* bstreams_;
  std::mutex mutex_;  // makes check-then-create of a dirent and handle allocation atomic
  uint64_t next_sequence_ = 1;
};

}  // namespace limpwatch::testbed::trove

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_OBJECT_SPACE_H_
