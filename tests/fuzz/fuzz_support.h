// What the fuzz targets share: stopping on a broken invariant, handing an
// input to a reader that only takes a path, and keeping name lookups off
// the network.
#ifndef LIMPWATCH_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define LIMPWATCH_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <nss.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace limpwatch::fuzzing {

// A broken invariant stops the run with a trap, which both engines report
// as a crash and keep the input of.
inline void Require(bool condition, const char* target, const char* invariant) {
  if (condition) return;
  std::fprintf(stderr, "%s fuzzer: invariant broken: %s\n", target, invariant);
  __builtin_trap();
}

inline std::string Text(std::span<const uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// An in-memory file (memfd) whose content is replaced for every input. The
// readers under test open it by path, as they open a file on disk, without
// the fuzzer touching the disk.
class InputFile {
 public:
  InputFile() : fd_(memfd_create("limpwatch-fuzz-input", MFD_CLOEXEC)) {
    Require(fd_ >= 0, "fuzz support", "memfd_create works");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& Write(std::span<const uint8_t> bytes) {
    Require(ftruncate(fd_, 0) == 0, "fuzz support", "the input file can be emptied");
    size_t written = 0;
    while (written < bytes.size()) {
      ssize_t result = pwrite(fd_, bytes.data() + written, bytes.size() - written, static_cast<off_t>(written));
      Require(result > 0, "fuzz support", "the input file can be written");
      written += static_cast<size_t>(result);
    }
    return path_;
  }
  const std::string& Write(const std::string& text) {
    return Write(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// Host names in the peer configuration are resolved with getaddrinfo. A
// fuzzer makes up thousands of names a second; asking DNS for each would
// make the run as slow as the network and send its inputs onto it. glibc's
// own switch takes the hosts database from /etc/hosts only, so names still
// go through the resolver the peer configuration uses.
inline void ResolveNamesFromHostsFileOnly() {
  static const bool configured = __nss_configure_lookup("hosts", "files") == 0;
  Require(configured, "fuzz support", "the name service switch takes 'hosts: files'");
}

// The lines of `text` (a last line without its newline counts).
inline size_t LineCount(const std::string& text) {
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// True when `message` starts with "ORIGIN:N" for a line N of 1..lines, as a
// parser's refusal must; *after gets the position after N.
inline bool NamesALine(const std::string& message, const std::string& origin, size_t lines, size_t* after = nullptr) {
  if (message.compare(0, origin.size() + 1, origin + ":") != 0) return false;
  size_t at = origin.size() + 1;
  size_t line = 0;
  size_t digits = 0;
  while (at < message.size() && message[at] >= '0' && message[at] <= '9' && digits < 12) {
    line = line * 10 + static_cast<size_t>(message[at++] - '0');
    ++digits;
  }
  if (after != nullptr) *after = at;
  return digits > 0 && line >= 1 && line <= lines;
}

}  // namespace limpwatch::fuzzing

#endif  // LIMPWATCH_TESTS_FUZZ_FUZZ_SUPPORT_H_
