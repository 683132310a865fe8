#include "limpwatch/analyzer/error_features.h"

#include <cerrno>
#include <unordered_map>
#include <unordered_set>

#include "limpwatch/analyzer/io_metrics.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

// errno values are small; 4095 is the kernel's upper bound for an error
// return, but every errno Linux defines is below 140.
constexpr int kLargestErrno = 140;

// Every error feature a server can report, by folded and by full name hash,
// built once: peers' summaries carry only keys, and their names are derived
// here rather than sent.
struct ErrorFeatureTable {
  std::unordered_map<uint32_t, ErrorFeature> by_key;
  std::unordered_set<uint64_t> hashes;

  ErrorFeatureTable() {
    for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
      for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
        for (int error = 1; error < kLargestErrno; ++error) {
          if (IsFlowControlErrno(error)) continue;
          ErrorFeature feature{static_cast<shm::FdKind>(kind), static_cast<shm::IoOperation>(operation), error};
          uint64_t hash = shm::FunctionNameHash(ErrorFeatureName(feature));
          by_key.emplace(FoldNameHash(hash), feature);
          hashes.insert(hash);
        }
      }
    }
  }
};

// Never destroyed: a server's analyzer thread may still be in a tick while
// exit() destroys static objects.
const ErrorFeatureTable& Table() {
  static const ErrorFeatureTable* table = new ErrorFeatureTable();
  return *table;
}

}  // namespace

bool IsFlowControlErrno(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR || error == EINPROGRESS || error == EALREADY;
}

bool IsPeerAbsenceErrno(int error) {
  return error == ECONNREFUSED || error == ECONNRESET || error == ECONNABORTED || error == EPIPE;
}

std::string ErrorFeatureName(const ErrorFeature& feature) {
  return "[error " + ErrnoName(feature.error) + " in " + FdKindName(feature.kind) + " " +
         IoOperationName(feature.operation) + "]";
}

const ErrorFeature* FindErrorFeature(uint32_t key) {
  const auto& by_key = Table().by_key;
  auto found = by_key.find(key);
  return found == by_key.end() ? nullptr : &found->second;
}

bool IsErrorFeatureHash(uint64_t name_hash) { return Table().hashes.count(name_hash) != 0; }

shm::Resource ResourceOfError(const ErrorFeature& feature) {
  switch (feature.error) {
    case ENOMEM:
      return shm::Resource::kMemory;
    case ENOSPC:
    case EDQUOT:
    case EIO:
    case EROFS:
    case EFBIG:
      return feature.kind == shm::FdKind::kFile ? shm::Resource::kDisk : shm::Resource::kUnknown;
    case ECONNRESET:
    case ECONNREFUSED:
    case ECONNABORTED:
    case EPIPE:
    case ETIMEDOUT:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ENETDOWN:
    case ENOBUFS:
      return feature.kind == shm::FdKind::kTcp || feature.kind == shm::FdKind::kUdp ? shm::Resource::kNetwork
                                                                                     : shm::Resource::kUnknown;
    default:
      return shm::Resource::kUnknown;
  }
}

}  // namespace limpwatch::analyzer
