// Object handles and attributes, as PVFS keeps them per object (dspace).
//
// A handle names one object on one server: the server's index sits in the
// top 16 bits (PVFS gives each server a handle range for the same reason), so
// a client knows which server owns a datafile from its handle alone.
//
// A file is a metafile (on its metadata server: the attributes below and a
// directory entry) plus one datafile (bstream) per server it is striped over.
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_OBJECT_ATTRIBUTES_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_OBJECT_ATTRIBUTES_H_

#include <cstdint>
#include <vector>

#include "common/message_codec.h"

namespace limpwatch::testbed {

inline constexpr uint64_t kInvalidHandle = 0;
inline constexpr int kHandleServerShift = 48;
inline constexpr uint64_t kHandleSequenceMask = (uint64_t{1} << kHandleServerShift) - 1;

inline uint64_t MakeHandle(uint32_t server_index, uint64_t sequence) {
  return (uint64_t{server_index + 1} << kHandleServerShift) | (sequence & kHandleSequenceMask);
}

// The server that owns `handle`, or -1 for an invalid handle.
inline int64_t ServerOfHandle(uint64_t handle) {
  if (handle == kInvalidHandle) return -1;
  return static_cast<int64_t>(handle >> kHandleServerShift) - 1;
}

enum class ObjectType : uint32_t { kMetafile = 1, kDatafile = 2 };

struct ObjectAttributes {
  ObjectType type = ObjectType::kDatafile;
  uint32_t stripe_size = 0;         // metafile: bytes per stripe unit
  std::vector<uint64_t> datafiles;  // metafile: stripe order, one per server used
  uint64_t create_time_ns = 0;

  void Encode(PayloadWriter* writer) const;
  // False on a malformed or implausible record.
  bool Decode(PayloadReader* reader);
};

// Datafiles a metafile may have (one per server).
inline constexpr uint32_t kMaxDatafiles = 256;

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_OBJECT_ATTRIBUTES_H_
