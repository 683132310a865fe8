#include "server/server_tally.h"

#include <unistd.h>

#include <cstdio>

namespace limpwatch::soak {

namespace {

// Constant-initialized: the signal handler may be the first to count.
constinit ServerTally g_tally{};

}  // namespace

ServerTally& Tally() { return g_tally; }

namespace {

void AddLine(std::string* text, const std::string& key, uint64_t value) {
  char digits[kTallyDigits + 1];
  std::snprintf(digits, sizeof digits, "%0*llu", int(kTallyDigits), static_cast<unsigned long long>(value));
  *text += key + " " + digits + "\n";
}

}  // namespace

std::string FormatTally(const ServerTally& tally) {
  std::string text;
  for (size_t index = 0; index < kKnownFunctionCount; ++index) {
    AddLine(&text, std::string("calls ") + kKnownFunctionNames[index], tally.calls[index].load());
  }
  for (size_t kind = 0; kind < kCountedKindCount; ++kind) {
    for (size_t op = 0; op < kCountedOpCount; ++op) {
      std::string prefix = std::string("io ") + kCountedKindNames[kind] + " " + kCountedOpNames[op];
      AddLine(&text, prefix + " calls", tally.io_calls[kind][op].load());
      AddLine(&text, prefix + " bytes", tally.io_bytes[kind][op].load());
    }
  }
  for (size_t index = 0; index < kServerEventCount; ++index) {
    AddLine(&text, std::string("event ") + kServerEventNames[index], tally.events[index].load());
  }
  return text;
}

bool WriteFinalTally(int fd) {
  ServerTally& tally = Tally();
  size_t length = FormatTally(tally).size();
  constexpr uint32_t kind = static_cast<uint32_t>(CountedKind::kPipe);
  constexpr uint32_t op = static_cast<uint32_t>(CountedOp::kWrite);
  tally.io_calls[kind][op].fetch_add(1);
  tally.io_bytes[kind][op].fetch_add(length);
  std::string text = FormatTally(tally);
  return write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

}  // namespace limpwatch::soak
