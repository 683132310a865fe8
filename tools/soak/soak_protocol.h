// What the soak driver and its traced server say to each other, and the
// names of what the server counts of itself.
//
// A request is a RequestHeader and `length` payload bytes; a reply is a
// ReplyHeader and `length` payload bytes. Both ends are this machine
// (loopback TCP or a Unix socket), so the headers travel in host order.
//
// At exit the server writes its own tally to stdout: one line per figure,
// "<key> <20-digit count>", keys from the lists below. The driver compares
// it, and what it sent and received itself, with the server's segment.
#ifndef LIMPWATCH_TOOLS_SOAK_SOAK_PROTOCOL_H_
#define LIMPWATCH_TOOLS_SOAK_SOAK_PROTOCOL_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace limpwatch::soak {

inline constexpr uint32_t kRequestMagic = 0x4b414f53;  // "SOAK"
inline constexpr uint32_t kReplyMagic = 0x594c5052;    // "RPLY"
inline constexpr uint32_t kMaxPayloadBytes = 1u << 20;

enum class RequestType : uint16_t {
  kEcho = 1,      // payload back
  kStore = 2,     // payload written to the storage file at block `argument`
  kLoad = 3,      // `argument` bytes read from the storage file, sent back
  kSync = 4,      // fdatasync of the storage file
  kThreads = 5,   // payload: ThreadsRequest; short threads started and joined
  kForkExec = 6,  // `argument` children forked, each calls soak_child_work and execs /bin/true
};

struct RequestHeader {
  uint32_t magic;
  uint16_t type;  // RequestType
  uint16_t reserved;
  uint32_t length;    // payload bytes that follow
  uint32_t argument;  // per type
};

struct ReplyHeader {
  uint32_t magic;
  uint32_t status;  // 0: done; else an errno
  uint32_t length;  // payload bytes that follow
  uint32_t reserved;
};

struct ThreadsRequest {
  uint32_t threads;       // started in waves of at most kThreadWave, each wave joined
  uint32_t calls_each;    // calls of soak_thread_work per thread
};
inline constexpr uint32_t kThreadWave = 16;

static_assert(sizeof(RequestHeader) == 16 && sizeof(ReplyHeader) == 16 && sizeof(ThreadsRequest) == 8);

// The traced functions whose calls the server counts itself ("calls NAME").
enum class KnownFunction : uint32_t {
  kServeConnection,
  kHandleEcho,
  kHandleStore,
  kHandleLoad,
  kHandleSync,
  kHandleThreads,
  kThreadWork,
  kHandleForkExec,
  kChildWork,
  kOnSignal,
  kSignalSeen,
};
inline constexpr size_t kKnownFunctionCount = 11;
inline constexpr std::array<const char*, kKnownFunctionCount> kKnownFunctionNames = {
    "soak_serve_connection", "soak_handle_echo",      "soak_handle_store", "soak_handle_load",
    "soak_handle_sync",      "soak_handle_threads",   "soak_thread_work",  "soak_handle_fork_exec",
    "soak_child_work",       "soak_on_signal",        "soak_signal_seen",
};

// The fd kinds whose reads and writes the server counts ("io KIND OP calls",
// "io KIND OP bytes"), named as limpwatch names them.
enum class CountedKind : uint32_t { kTcp, kUnix, kFile, kPipe };
inline constexpr size_t kCountedKindCount = 4;
inline constexpr std::array<const char*, kCountedKindCount> kCountedKindNames = {"tcp", "unix", "file", "pipe"};
enum class CountedOp : uint32_t { kRead, kWrite };
inline constexpr size_t kCountedOpCount = 2;
inline constexpr std::array<const char*, kCountedOpCount> kCountedOpNames = {"read", "write"};

// Other figures of the tally ("event NAME").
enum class ServerEvent : uint32_t {
  kSignalsHandled,    // handler runs, every signal included
  kSignalBytesLost,   // self-pipe writes that failed (pipe full)
  kForks,             // children forked
  kChildrenFailed,    // children that did not exit 0
  kThreadsStarted,    // short threads started
  kThreadsFailed,     // pthread_create failures
  kFileSyncs,         // fdatasync calls
  kConnections,       // connections accepted
};
inline constexpr size_t kServerEventCount = 8;
inline constexpr std::array<const char*, kServerEventCount> kServerEventNames = {
    "signals_handled", "signal_bytes_lost", "forks",        "children_failed",
    "threads_started", "threads_failed",    "file_syncs",   "connections",
};

inline constexpr size_t kTallyDigits = 20;

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SOAK_PROTOCOL_H_
