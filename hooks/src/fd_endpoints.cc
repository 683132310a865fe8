#include "fd_endpoints.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "fd_table.h"

namespace limpwatch::hooks {
namespace {

constexpr int kReadAttempts = 8;

// One side in three words: family and port, then the 16 address bytes.
struct EndpointWords {
  std::atomic<uint64_t> words[3];
};

struct EndpointRecord {
  std::atomic<uint64_t> sequence;  // odd while being written
  EndpointWords sides[2];
};

constinit EndpointRecord g_endpoints[kEndpointTableSize] = {};

EndpointRecord* RecordOf(int fd) {
  return static_cast<uint32_t>(fd) < std::min(kEndpointTableSize, g_fd_table_size) ? &g_endpoints[fd] : nullptr;
}

void Pack(const Endpoint& endpoint, uint64_t words[3]) {
  words[0] = uint64_t{endpoint.family} | uint64_t{endpoint.port} << 16;
  std::memcpy(&words[1], endpoint.address, 16);
}

Endpoint Unpack(const uint64_t words[3]) {
  Endpoint endpoint;
  endpoint.family = static_cast<uint16_t>(words[0]);
  endpoint.port = static_cast<uint16_t>(words[0] >> 16);
  std::memcpy(endpoint.address, &words[1], 16);
  return endpoint;
}

// Runs `write` with the record's sequence taken; does nothing when another
// writer holds it.
template <typename Write>
void WriteRecord(EndpointRecord& record, Write write) {
  uint64_t sequence = record.sequence.load(std::memory_order_relaxed);
  if ((sequence & 1) != 0 ||
      !record.sequence.compare_exchange_strong(sequence, sequence + 1, std::memory_order_acquire)) {
    return;
  }
  write();
  record.sequence.store(sequence + 2, std::memory_order_release);
}

void StoreSide(EndpointRecord& record, EndpointSide side, const uint64_t words[3]) {
  EndpointWords& target = record.sides[static_cast<uint32_t>(side)];
  for (int i = 0; i < 3; ++i) target.words[i].store(words[i], std::memory_order_relaxed);
}

// True when no side holds an address and no writer is at work: every open()
// of a file lands here, and most fd numbers never held a socket, so the
// common case costs a few loads instead of a locked compare-and-swap and
// seven stores (callgrind: ClearEndpoints took 66 of the ~240 instructions
// limpwatch added to an open, now 31). A writer that starts after this check
// is the same race as one that starts after a clear: a late note about a
// socket already closed.
bool IsEmpty(const EndpointRecord& record) {
  if ((record.sequence.load(std::memory_order_acquire) & 1) != 0) return false;
  const std::atomic<uint64_t>* local = record.sides[0].words;
  const std::atomic<uint64_t>* peer = record.sides[1].words;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return (local[0].load(kRelaxed) | local[1].load(kRelaxed) | local[2].load(kRelaxed) | peer[0].load(kRelaxed) |
          peer[1].load(kRelaxed) | peer[2].load(kRelaxed)) == 0;
}

}  // namespace

Endpoint EndpointFromSockaddr(const sockaddr* address, socklen_t length) {
  Endpoint endpoint;
  if (address == nullptr || length < static_cast<socklen_t>(sizeof(sa_family_t))) return endpoint;
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    endpoint.family = AF_INET;
    endpoint.port = ntohs(in->sin_port);
    std::memcpy(endpoint.address, &in->sin_addr, 4);
  } else if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    endpoint.family = AF_INET6;
    endpoint.port = ntohs(in6->sin6_port);
    std::memcpy(endpoint.address, &in6->sin6_addr, 16);
  } else if (address->sa_family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(address);
    endpoint.family = AF_UNIX;
    size_t path_bytes = length > offsetof(sockaddr_un, sun_path) ? length - offsetof(sockaddr_un, sun_path) : 0;
    std::memcpy(endpoint.address, un->sun_path, std::min<size_t>({path_bytes, sizeof un->sun_path, 16}));
  }
  return endpoint;
}

void NoteEndpoint(int fd, EndpointSide side, const sockaddr* address, socklen_t length) {
  EndpointRecord* record = RecordOf(fd);
  if (record == nullptr) return;
  uint64_t words[3];
  Pack(EndpointFromSockaddr(address, length), words);
  WriteRecord(*record, [&] { StoreSide(*record, side, words); });
}

void ClearEndpoints(int fd) {
  EndpointRecord* record = RecordOf(fd);
  if (record == nullptr || IsEmpty(*record)) return;
  const uint64_t empty[3] = {0, 0, 0};
  WriteRecord(*record, [&] {
    StoreSide(*record, EndpointSide::kLocal, empty);
    StoreSide(*record, EndpointSide::kPeer, empty);
  });
}

void CopyEndpoints(int source, int target) {
  EndpointRecord* record = RecordOf(target);
  if (record == nullptr) return;
  Endpoint sides[2];
  for (uint32_t side = 0; side < 2; ++side) LoadEndpoint(source, static_cast<EndpointSide>(side), &sides[side]);
  WriteRecord(*record, [&] {
    for (uint32_t side = 0; side < 2; ++side) {
      uint64_t words[3];
      Pack(sides[side], words);
      StoreSide(*record, static_cast<EndpointSide>(side), words);
    }
  });
}

bool LoadEndpoint(int fd, EndpointSide side, Endpoint* out) {
  *out = Endpoint{};
  EndpointRecord* record = RecordOf(fd);
  if (record == nullptr) return false;
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    uint64_t before = record->sequence.load(std::memory_order_acquire);
    if (before & 1) continue;
    uint64_t words[3];
    const EndpointWords& source = record->sides[static_cast<uint32_t>(side)];
    for (int i = 0; i < 3; ++i) words[i] = source.words[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (record->sequence.load(std::memory_order_relaxed) != before) continue;
    *out = Unpack(words);
    return out->family != AF_UNSPEC;
  }
  return false;
}

std::string FormatEndpoint(const Endpoint& endpoint) {
  char text[INET6_ADDRSTRLEN + 16];
  switch (endpoint.family) {
    case AF_INET:
      inet_ntop(AF_INET, endpoint.address, text, sizeof text);
      return std::string(text) + ":" + std::to_string(endpoint.port);
    case AF_INET6:
      inet_ntop(AF_INET6, endpoint.address, text, sizeof text);
      return "[" + std::string(text) + "]:" + std::to_string(endpoint.port);
    case AF_UNIX: {
      const char* path = reinterpret_cast<const char*>(endpoint.address);
      if (path[0] == '\0' && path[1] == '\0') return "unix:(unnamed)";
      if (path[0] == '\0') return "unix:@" + std::string(path + 1, strnlen(path + 1, 15));
      return "unix:" + std::string(path, strnlen(path, 16));
    }
    default:
      return "?";
  }
}

}  // namespace limpwatch::hooks
