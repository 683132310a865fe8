#include "replay_oracle.h"

#include <algorithm>
#include <cstring>

namespace limpwatch::soak {
namespace {

constexpr size_t kFixedHeaderBytes = 72;
constexpr size_t kRememberedBoots = 4;

uint64_t LittleEndian64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int index = 7; index >= 0; --index) value = (value << 8) | bytes[index];
  return value;
}

}  // namespace

bool ReadSummaryStamp(std::span<const uint8_t> datagram, SummaryStamp* stamp) {
  if (datagram.size() < kFixedHeaderBytes || std::memcmp(datagram.data(), "LWPS", 4) != 0) return false;
  size_t header_size = size_t(datagram[8]) | size_t(datagram[9]) << 8;
  size_t node_length = datagram[12];
  if (header_size < kFixedHeaderBytes || header_size + node_length > datagram.size()) return false;
  stamp->boot_id = LittleEndian64(datagram.data() + 16);
  stamp->window = LittleEndian64(datagram.data() + 24);
  stamp->window_end_unix_ms = LittleEndian64(datagram.data() + 32);
  stamp->node.assign(reinterpret_cast<const char*>(datagram.data() + header_size), node_length);
  return true;
}

ReplayVerdict ReplayOracle::Judge(std::span<const uint8_t> datagram) {
  SummaryStamp stamp;
  if (!ReadSummaryStamp(datagram, &stamp)) return ReplayVerdict::kNotASummary;
  auto found = streams_.find(stamp.node);
  if (found == streams_.end()) {
    streams_[stamp.node] = {stamp.boot_id, stamp.window, stamp.window_end_unix_ms, {}};
    return ReplayVerdict::kAccepted;
  }
  Stream& stream = found->second;
  if (stamp.boot_id == stream.boot_id) {
    if (stamp.window <= stream.last_window) return ReplayVerdict::kReplayed;
    stream.last_window = stamp.window;
    stream.last_window_end_unix_ms = std::max(stream.last_window_end_unix_ms, stamp.window_end_unix_ms);
    return ReplayVerdict::kAccepted;
  }
  bool replaced = std::find(stream.replaced_boots.begin(), stream.replaced_boots.end(), stamp.boot_id) !=
                  stream.replaced_boots.end();
  if (replaced || stamp.window_end_unix_ms <= stream.last_window_end_unix_ms) return ReplayVerdict::kStaleBoot;
  stream.replaced_boots.push_back(stream.boot_id);
  if (stream.replaced_boots.size() > kRememberedBoots) stream.replaced_boots.pop_front();
  stream.boot_id = stamp.boot_id;
  stream.last_window = stamp.window;
  stream.last_window_end_unix_ms = stamp.window_end_unix_ms;
  return ReplayVerdict::kAccepted;
}

}  // namespace limpwatch::soak
