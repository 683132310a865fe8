#include "serve/loopback_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace limpwatch::testing {

int ConnectLoopback(uint16_t port, int receive_timeout_s) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{receive_timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string HttpGetReply(uint16_t port, const std::string& target, int receive_timeout_s) {
  int fd = ConnectLoopback(port, receive_timeout_s);
  if (fd < 0) return "";
  std::string reply;
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) == ssize_t(request.size())) {
    char buffer[65536];
    ssize_t count;
    while ((count = recv(fd, buffer, sizeof buffer, 0)) > 0) reply.append(buffer, size_t(count));
  }
  close(fd);
  return reply;
}

}  // namespace limpwatch::testing
