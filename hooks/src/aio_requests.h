// POSIX AIO requests in flight, so their service time can be measured.
//
// glibc (2.34 and later) serves aio_read, aio_write and lio_listio with
// helper threads that call pread/pwrite *inside* the C library, where no
// interposer sees them. OrangeFS's "dbpf" trove method submits its bstream
// I/O that way. So the submission is hooked instead: each aiocb is entered
// here with its submit time, kind and operation, the first aio_error() that
// no longer says EINPROGRESS (or the return of a waiting lio_listio) stamps
// its completion, and aio_return() counts it, in the thread that reaps it.
// A request that failed is counted by the first aio_error() that reports the
// failure, since programs (OrangeFS's dbpf among them) call aio_return()
// only after a success; a later aio_return() then does not count it again.
// The service time is thus submission to observed completion: it includes
// glibc's queueing, as the server experiences it.
//
// A fixed table of kAioTableSize entries keyed by the aiocb's address, open
// addressing over a short probe window, compare-and-swap only. A request
// that finds no room is still counted when reaped, without time
// (IoBlock::untimed_calls).
#ifndef LIMPWATCH_HOOKS_SRC_AIO_REQUESTS_H_
#define LIMPWATCH_HOOKS_SRC_AIO_REQUESTS_H_

#include <cstdint>

#include "limpwatch/shm/layout.h"

namespace limpwatch::hooks {

inline constexpr uint32_t kAioTableSize = 4096;

struct AioRequest {
  shm::FdKind kind = shm::FdKind::kOther;
  shm::IoOperation operation = shm::IoOperation::kOther;
  uint64_t submit_ticks = 0;
  uint64_t complete_ticks = 0;  // 0 when no completion was observed before reaping
  bool counted = false;         // its failure was counted already, by aio_error()
};

// Enters a submitted request; false when the table had no room.
bool TrackAioRequest(const void* control_block, shm::FdKind kind, shm::IoOperation operation, uint64_t now);

// Stamps the completion time once (later calls keep the first stamp).
void NoteAioCompleted(const void* control_block, uint64_t now);

// Marks a failed request as counted and returns it; false when it is not
// tracked or was counted already (so exactly one caller counts a failure).
bool ClaimAioFailure(const void* control_block, AioRequest* out);

// Removes the request and returns what was known of it; false if untracked.
bool TakeAioRequest(const void* control_block, AioRequest* out);

}  // namespace limpwatch::hooks

#endif  // LIMPWATCH_HOOKS_SRC_AIO_REQUESTS_H_
