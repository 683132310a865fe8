#include "limpwatch/analyzer/peer_key.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace limpwatch::analyzer {

namespace {

std::string FormatMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Reads at most `limit` bytes; returns false with *error on a read failure.
bool ReadAll(int fd, size_t limit, std::vector<uint8_t>* out, std::string* error, const std::string& path) {
  out->resize(limit);
  size_t filled = 0;
  while (filled < limit) {
    ssize_t got = ::read(fd, out->data() + filled, limit - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      *error = "peer key file " + path + ": cannot read: " + strerror(errno);
      return false;
    }
    if (got == 0) break;
    filled += static_cast<size_t>(got);
  }
  out->resize(filled);
  return true;
}

}  // namespace

std::optional<PeerKey> PeerKey::FromBytes(std::span<const uint8_t> bytes, std::string* error) {
  if (bytes.size() < kMinBytes || bytes.size() > kMaxBytes) {
    *error = "peer key has " + std::to_string(bytes.size()) + " bytes; it needs " + std::to_string(kMinBytes) +
             " to " + std::to_string(kMaxBytes);
    return std::nullopt;
  }
  error->clear();
  return PeerKey(bytes);
}

std::optional<PeerKey> LoadPeerKeyFile(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = "peer key file " + path + ": cannot open: " + strerror(errno);
    return std::nullopt;
  }
  // Checked on the open descriptor, so the file cannot be swapped between
  // the check and the read.
  struct stat status;
  if (::fstat(fd, &status) != 0) {
    *error = "peer key file " + path + ": cannot stat: " + strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  if (!S_ISREG(status.st_mode)) {
    *error = "peer key file " + path + " is not a regular file";
    ::close(fd);
    return std::nullopt;
  }
  if ((status.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    *error = "peer key file " + path + " is accessible by group or others (mode " + FormatMode(status.st_mode) +
             "); refusing it: chmod 600 " + path;
    ::close(fd);
    return std::nullopt;
  }

  std::vector<uint8_t> bytes;
  // Two bytes over the maximum leave room for a trailing "\r\n".
  bool read_ok = ReadAll(fd, PeerKey::kMaxBytes + 3, &bytes, error, path);
  ::close(fd);
  if (!read_ok) return std::nullopt;
  if (bytes.size() > PeerKey::kMaxBytes + 2) {
    explicit_bzero(bytes.data(), bytes.size());
    *error = "peer key file " + path + " holds more than " + std::to_string(PeerKey::kMaxBytes) + " bytes";
    return std::nullopt;
  }
  if (!bytes.empty() && bytes.back() == '\n') {
    bytes.pop_back();
    if (!bytes.empty() && bytes.back() == '\r') bytes.pop_back();
  }
  auto key = PeerKey::FromBytes(bytes, error);
  explicit_bzero(bytes.data(), bytes.size());
  if (!key) *error = "peer key file " + path + ": " + *error;
  return key;
}

std::optional<PeerKey> LoadPeerKeyFromEnvironment(std::string* error) {
  error->clear();
  const char* path = std::getenv(kPeerKeyFileVariable);
  if (path == nullptr || *path == '\0') return std::nullopt;
  auto key = LoadPeerKeyFile(path, error);
  if (!key) *error = std::string(kPeerKeyFileVariable) + ": " + *error;
  return key;
}

}  // namespace limpwatch::analyzer
