// POSIX AIO: submissions are entered in the request table, completions are
// stamped by aio_error and lio_listio(LIO_WAIT), and aio_return counts each
// request in the thread that reaps it (see aio_requests.h for why).
#include <aio.h>

#include <cerrno>

#include "aio_requests.h"
#include "hook_export.h"
#include "io_accounting.h"
#include "real_calls.h"

static_assert(sizeof(aiocb) == sizeof(aiocb64), "aiocb and aiocb64 are one layout on LP64");

namespace limpwatch::hooks {
namespace {

using shm::FdKind;
using shm::IoOperation;

template <typename Function>
Function Real(Function resolved, const char* name) {
  return resolved != nullptr ? resolved : reinterpret_cast<Function>(ResolveRealCall(name));
}

int RealAioError(const aiocb* control_block) {
  auto real = Real(RealOf(g_real.aio_error), "aio_error");
  return real != nullptr ? real(control_block) : EINVAL;
}

IoOperation OperationOfOpcode(int opcode) {
  switch (opcode & 0x7f) {  // glibc marks the 64-bit forms with 128
    case LIO_READ: return IoOperation::kRead;
    case LIO_WRITE: return IoOperation::kWrite;
    default: return IoOperation::kSync;
  }
}

// The kind of the request's fd; errno is left as it was.
FdKind KindOf(int fd) {
  uint64_t entry = LoadFdEntry(fd);
  if (IsCheckedEntry(entry)) return EntryKind(entry);
  int saved = errno;
  uint64_t classified;
  FdKind kind = ClassifyFd(fd, entry, &classified);
  errno = saved;
  return kind;
}

// Submits one request with `submit`, entered in the table first so that a
// completion can never be observed before it is known.
template <typename Submit>
int SubmitOne(const aiocb* control_block, IoOperation operation, Submit submit) {
  FdKind kind = KindOf(control_block->aio_fildes);
  TrackAioRequest(control_block, kind, operation, runtime::ReadTicks());
  int result = submit();
  if (result != 0) {
    // Refused: nothing will complete; the refusal itself is the call.
    int error = errno;
    AioRequest ignored;
    TakeAioRequest(control_block, &ignored);
    CountedCall call;
    call.CountMeasured(kind, operation, true, error, 0, 0, true);
  }
  return result;
}

int ListIo(int mode, aiocb* const list[], int count, sigevent* notification,
           int (*real)(int, aiocb* const[], int, sigevent*)) {
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  uint64_t now = runtime::ReadTicks();
  for (int i = 0; i < count && list != nullptr; ++i) {
    const aiocb* control_block = list[i];
    if (control_block == nullptr || (control_block->aio_lio_opcode != LIO_READ &&
                                     control_block->aio_lio_opcode != LIO_WRITE)) {
      continue;
    }
    TrackAioRequest(control_block, KindOf(control_block->aio_fildes),
                    OperationOfOpcode(control_block->aio_lio_opcode), now);
  }
  int result = real(mode, list, count, notification);
  int error = errno;
  if (result != 0 && (error == EINVAL || error == ENOSYS)) {
    // Nothing was queued: forget the requests.
    for (int i = 0; i < count && list != nullptr; ++i) {
      AioRequest ignored;
      if (list[i] != nullptr) TakeAioRequest(list[i], &ignored);
    }
  } else if (mode == LIO_WAIT && list != nullptr) {
    uint64_t done = runtime::ReadTicks();
    for (int i = 0; i < count; ++i) {
      if (list[i] != nullptr && RealAioError(list[i]) != EINPROGRESS) NoteAioCompleted(list[i], done);
    }
  }
  errno = error;
  return result;
}

// The first aio_error() after completion stamps the time; one that reports
// a failure counts the request (programs often reap only successes).
int ErrorOf(const aiocb* control_block, int (*real)(const aiocb*)) {
  int result = real != nullptr ? real(control_block) : EINVAL;
  if (result == EINPROGRESS) return result;
  int saved = errno;
  uint64_t now = runtime::ReadTicks();
  NoteAioCompleted(control_block, now);
  AioRequest request;
  if (result != 0 && ClaimAioFailure(control_block, &request)) {
    uint64_t end = request.complete_ticks != 0 ? request.complete_ticks : now;
    CountedCall call;
    call.CountMeasured(request.kind, request.operation, true, result, 0,
                       end > request.submit_ticks ? end - request.submit_ticks : 0, true);
  }
  errno = saved;
  return result;
}

ssize_t Reap(aiocb* control_block, ssize_t (*real)(aiocb*)) {
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  int status = RealAioError(control_block);
  ssize_t result = real(control_block);
  if (status == EINPROGRESS) return result;  // not finished: the program asked too early
  int saved = errno;
  uint64_t now = runtime::ReadTicks();
  AioRequest request;
  bool tracked = TakeAioRequest(control_block, &request);
  if (tracked && request.counted) {  // a failure aio_error() counted already
    errno = saved;
    return result;
  }
  CountedCall call;
  if (call.counting()) {
    if (!tracked) {
      request.kind = KindOf(control_block->aio_fildes);
      request.operation = OperationOfOpcode(control_block->aio_lio_opcode);
    }
    uint64_t end = request.complete_ticks != 0 ? request.complete_ticks : now;
    uint64_t ticks = tracked && end > request.submit_ticks ? end - request.submit_ticks : 0;
    bool failed = status != 0;
    call.CountMeasured(request.kind, request.operation, failed, status,
                       failed || result < 0 ? 0 : static_cast<uint64_t>(result), ticks, tracked);
  }
  errno = saved;
  return result;
}

}  // namespace
}  // namespace limpwatch::hooks

using limpwatch::hooks::g_real;
using limpwatch::hooks::RealOf;
using limpwatch::hooks::Real;
using limpwatch::shm::IoOperation;

LW_INTERPOSED int aio_read(aiocb* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_read), "aio_read");
  return limpwatch::hooks::SubmitOne(control_block, IoOperation::kRead, [&] { return real != nullptr ? real(control_block) : (errno = ENOSYS, -1); });
}

LW_INTERPOSED int aio_read64(aiocb64* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_read64), "aio_read64");
  return limpwatch::hooks::SubmitOne(reinterpret_cast<aiocb*>(control_block), IoOperation::kRead,
                                     [&] { return real != nullptr ? real(control_block) : (errno = ENOSYS, -1); });
}

LW_INTERPOSED int aio_write(aiocb* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_write), "aio_write");
  return limpwatch::hooks::SubmitOne(control_block, IoOperation::kWrite, [&] { return real != nullptr ? real(control_block) : (errno = ENOSYS, -1); });
}

LW_INTERPOSED int aio_write64(aiocb64* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_write64), "aio_write64");
  return limpwatch::hooks::SubmitOne(reinterpret_cast<aiocb*>(control_block), IoOperation::kWrite,
                                     [&] { return real != nullptr ? real(control_block) : (errno = ENOSYS, -1); });
}

LW_INTERPOSED int aio_fsync(int operation, aiocb* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_fsync), "aio_fsync");
  return limpwatch::hooks::SubmitOne(control_block, IoOperation::kSync,
                                     [&] { return real != nullptr ? real(operation, control_block) : (errno = ENOSYS, -1); });
}

LW_INTERPOSED int aio_fsync64(int operation, aiocb64* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_fsync64), "aio_fsync64");
  return limpwatch::hooks::SubmitOne(reinterpret_cast<aiocb*>(control_block), IoOperation::kSync,
                                     [&] { return real != nullptr ? real(operation, control_block) : (errno = ENOSYS, -1); });
}

LW_INTERPOSED int lio_listio(int mode, aiocb* const list[], int count, sigevent* notification) noexcept {
  return limpwatch::hooks::ListIo(mode, list, count, notification, Real(RealOf(g_real.lio_listio), "lio_listio"));
}

LW_INTERPOSED int lio_listio64(int mode, aiocb64* const list[], int count, sigevent* notification) noexcept {
  auto real = Real(RealOf(g_real.lio_listio64), "lio_listio64");
  return limpwatch::hooks::ListIo(mode, reinterpret_cast<aiocb* const*>(list), count, notification,
                                  reinterpret_cast<int (*)(int, aiocb* const[], int, sigevent*)>(real));
}

LW_INTERPOSED int aio_error(const aiocb* control_block) noexcept {
  return limpwatch::hooks::ErrorOf(control_block, Real(RealOf(g_real.aio_error), "aio_error"));
}

LW_INTERPOSED int aio_error64(const aiocb64* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_error64), "aio_error64");
  return limpwatch::hooks::ErrorOf(reinterpret_cast<const aiocb*>(control_block),
                                   reinterpret_cast<int (*)(const aiocb*)>(real));
}

LW_INTERPOSED ssize_t aio_return(aiocb* control_block) noexcept {
  return limpwatch::hooks::Reap(control_block, Real(RealOf(g_real.aio_return), "aio_return"));
}

LW_INTERPOSED ssize_t aio_return64(aiocb64* control_block) noexcept {
  auto real = Real(RealOf(g_real.aio_return64), "aio_return64");
  return limpwatch::hooks::Reap(reinterpret_cast<aiocb*>(control_block),
                                reinterpret_cast<ssize_t (*)(aiocb*)>(real));
}
