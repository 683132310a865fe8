// Failed I/O calls as features (seed 001's propagated errors, compared
// among peers instead of against a trained list of errnos).
//
// Every tick, each (fd kind, operation, errno) the server's I/O calls
// returned becomes a feature named "[error ENOSPC in file write]", with the
// number of failures as its calls. It is recorded, summarized and sent to
// the peers like a function, so a replay sees what the servers saw.
//
// Errnos that are flow control, not failure, are left out: EAGAIN /
// EWOULDBLOCK (every non-blocking socket read that finds nothing), EINTR,
// EINPROGRESS and EALREADY (a non-blocking connect under way).
//
// A server is indicted for errors (cluster_diagnoser.h) when, in one window,
// it returned an errno at least kMinAbnormalErrors times and at least
// kErrorPeerFactor times as often as the median of its peers (outside its
// warm-up windows for the peer-absence errnos below). Errors every
// server returns alike (ENOENT of lookups spread over the servers) cancel
// out; one server's storage filling up (ENOSPC), its descriptors running
// out (EMFILE) or its disk failing (EIO) do not.
#ifndef LIMPWATCH_ANALYZER_ERROR_FEATURES_H_
#define LIMPWATCH_ANALYZER_ERROR_FEATURES_H_

#include <cstdint>
#include <string>

#include "limpwatch/shm/layout.h"

namespace limpwatch::analyzer {

inline constexpr double kMinAbnormalErrors = 3;
inline constexpr double kErrorPeerFactor = 4;

struct ErrorFeature {
  shm::FdKind kind = shm::FdKind::kOther;
  shm::IoOperation operation = shm::IoOperation::kOther;
  int error = 0;
};

// Whether `error` only says "not now" (EAGAIN, EINTR, EINPROGRESS, EALREADY).
bool IsFlowControlErrno(int error);

// Whether `error` says that the other end of a connection was not listening
// or went away (ECONNREFUSED, ECONNRESET, ECONNABORTED, EPIPE): the state of
// a peer, not of the server that saw it. A server that starts before its
// peers sees these until they listen, so they are not compared during a
// server's warm-up.
bool IsPeerAbsenceErrno(int error);

// "[error EMFILE in tcp accept]".
std::string ErrorFeatureName(const ErrorFeature& feature);

// The error feature whose folded name hash (peer_summary.h) is `key`, or
// nullptr when `key` is no error feature's.
const ErrorFeature* FindErrorFeature(uint32_t key);

// Whether a 64-bit function-name hash is an error feature's.
bool IsErrorFeatureHash(uint64_t name_hash);

// What an abnormal errno says is short: a full or failing storage (disk),
// a broken connection (network), memory, or nothing more specific
// (descriptor limits, permissions: kUnknown).
shm::Resource ResourceOfError(const ErrorFeature& feature);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_ERROR_FEATURES_H_
