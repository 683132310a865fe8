#include "limpwatch/analyzer/peer_table.h"

#include <time.h>

#include <algorithm>

namespace limpwatch::analyzer {

PeerTable::PeerTable(std::vector<PeerEndpoint> peers, int64_t now_monotonic_ns, const PeerTable* previous) {
  entries_.reserve(peers.size());
  for (auto& peer : peers) {
    if (previous != nullptr) {
      auto kept = std::find_if(previous->entries_.begin(), previous->entries_.end(), [&](const PeerLiveness& old) {
        return old.endpoint.name == peer.name && old.endpoint.address == peer.address;
      });
      if (kept != previous->entries_.end()) {
        entries_.push_back(*kept);
        entries_.back().endpoint = std::move(peer);
        continue;
      }
    }
    PeerLiveness entry;
    entry.endpoint = std::move(peer);
    entry.last_accept_monotonic_ns = now_monotonic_ns;
    entries_.push_back(std::move(entry));
  }
}

int PeerTable::Find(const PeerAddress& address) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].endpoint.address == address) return static_cast<int>(i);
  }
  return -1;
}

void PeerTable::RecordAccepted(size_t index, const PeerSummary& summary, int64_t now_monotonic_ns,
                               uint64_t now_unix_ms) {
  if (index >= entries_.size()) return;
  PeerLiveness& entry = entries_[index];
  if (entry.heard && entry.boot_id != summary.boot_id) ++entry.restarts;
  entry.heard = true;
  entry.node = summary.node;
  entry.boot_id = summary.boot_id;
  entry.last_window = summary.window;
  entry.last_window_end_unix_ms = summary.window_end_unix_ms;
  entry.last_accept_monotonic_ns = now_monotonic_ns;
  entry.last_accept_unix_ms = now_unix_ms;
  ++entry.accepted;
}

int64_t PeerTable::SilentNs(size_t index, int64_t now_monotonic_ns) const {
  if (index >= entries_.size()) return 0;
  return std::max<int64_t>(0, now_monotonic_ns - entries_[index].last_accept_monotonic_ns);
}

uint64_t PeerTable::SilentWindows(size_t index, int64_t now_monotonic_ns, int64_t window_ns) const {
  if (window_ns <= 0) return 0;
  return static_cast<uint64_t>(SilentNs(index, now_monotonic_ns) / window_ns);
}

int64_t MonotonicNowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

uint64_t RealtimeNowMs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1'000'000;
}

}  // namespace limpwatch::analyzer
