// lw_fd_describe(): what the fd table and the endpoint table say about an fd.
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "fd_endpoints.h"
#include "fd_table.h"
#include "limpwatch/limpwatch.h"

namespace limpwatch::hooks {
namespace {

const char* KindName(shm::FdKind kind) {
  switch (kind) {
    case shm::FdKind::kFile: return "file";
    case shm::FdKind::kTcp: return "tcp";
    case shm::FdKind::kUdp: return "udp";
    case shm::FdKind::kUnix: return "unix";
    case shm::FdKind::kPipe: return "pipe";
    case shm::FdKind::kOther: return "other";
  }
  return "other";
}

// The recorded side, or the kernel's answer now (then recorded).
std::string SideOf(int fd, EndpointSide side) {
  Endpoint endpoint;
  if (!LoadEndpoint(fd, side, &endpoint)) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    int result = side == EndpointSide::kLocal ? getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length)
                                              : getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length);
    if (result != 0) return "-";
    NoteEndpoint(fd, side, reinterpret_cast<sockaddr*>(&address), length);
    endpoint = EndpointFromSockaddr(reinterpret_cast<sockaddr*>(&address), length);
  }
  return FormatEndpoint(endpoint);
}

std::string Describe(int fd) {
  uint64_t entry = LoadFdEntry(fd);
  if (!IsCheckedEntry(entry)) ClassifyFd(fd, entry, &entry);
  FdInfo info = DecodeFdEntry(entry);
  std::string text = KindName(info.kind);
  if (info.has_role) text += info.role == shm::SocketRole::kAccepted ? " accepted" : " connected";
  if (info.kind == shm::FdKind::kFile) {
    uint32_t device = info.device;
    text += " dev " + std::to_string((device >> 8) & 0xfff) + ":" + std::to_string((device & 0xff) | ((device >> 12) & 0xfff00));
  }
  if (info.kind == shm::FdKind::kTcp || info.kind == shm::FdKind::kUdp || info.kind == shm::FdKind::kUnix) {
    text += " local " + SideOf(fd, EndpointSide::kLocal) + " peer " + SideOf(fd, EndpointSide::kPeer);
  }
  return text;
}

}  // namespace
}  // namespace limpwatch::hooks

extern "C" [[gnu::visibility("default"), gnu::no_instrument_function]] int lw_fd_describe(int fd, char* buffer,
                                                                                           size_t size) {
  limpwatch::runtime::ThreadState& thread = limpwatch::runtime::t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  int result = -1;
  struct stat status;
  if (buffer != nullptr && fd >= 0 && fstat(fd, &status) == 0) {
    std::string text = limpwatch::hooks::Describe(fd);
    if (text.size() + 1 <= size) {
      std::memcpy(buffer, text.c_str(), text.size() + 1);
      result = static_cast<int>(text.size());
    }
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
  return result;
}
