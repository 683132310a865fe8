// What this server last heard from each configured peer: the data behind the
// analyzer's "peer silent for N windows" (crash / hang) alarm. The alarm and
// its threshold are the analyzer's; this table only keeps the facts.
//
// One entry per configured peer, in configuration order, including peers
// never heard from (their silence counts from when the table was made).
// Times are the receiver's: CLOCK_MONOTONIC for durations (immune to clock
// steps) and CLOCK_REALTIME milliseconds for alarms and logs.
// Not thread-safe: the receiving thread owns it; copy entries() to share.
#ifndef LIMPWATCH_ANALYZER_PEER_TABLE_H_
#define LIMPWATCH_ANALYZER_PEER_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "limpwatch/analyzer/peer_config.h"
#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::analyzer {

struct PeerLiveness {
  PeerEndpoint endpoint;
  bool heard = false;                  // at least one summary accepted
  std::string node;                    // the node name its summaries carry
  uint64_t boot_id = 0;
  uint64_t last_window = 0;            // window of the last accepted summary
  uint64_t last_window_end_unix_ms = 0;
  int64_t last_accept_monotonic_ns = 0;  // when it was accepted (or the table made, if never)
  uint64_t last_accept_unix_ms = 0;
  uint64_t accepted = 0;               // summaries accepted from it
  uint64_t restarts = 0;               // boot id changes seen after the first summary
};

class PeerTable {
 public:
  // `now_monotonic_ns` starts every peer's silence. A peer found in
  // `previous` (same name and address) keeps its entry from there.
  PeerTable(std::vector<PeerEndpoint> peers, int64_t now_monotonic_ns, const PeerTable* previous = nullptr);

  // The configured peer with this address, or -1.
  int Find(const PeerAddress& address) const;

  // Records an accepted summary from peer `index`.
  void RecordAccepted(size_t index, const PeerSummary& summary, int64_t now_monotonic_ns, uint64_t now_unix_ms);

  const std::vector<PeerLiveness>& entries() const { return entries_; }

  // Nanoseconds since peer `index` was last heard from (or since the table
  // was made when it never was).
  int64_t SilentNs(size_t index, int64_t now_monotonic_ns) const;

  // Whole windows of `window_ns` since then: what "silent for N windows" tests.
  uint64_t SilentWindows(size_t index, int64_t now_monotonic_ns, int64_t window_ns) const;

 private:
  std::vector<PeerLiveness> entries_;
};

// CLOCK_MONOTONIC and CLOCK_REALTIME, in the units the table uses.
int64_t MonotonicNowNs();
uint64_t RealtimeNowMs();

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_TABLE_H_
