// Replay protection for peer summaries, per sending node.
//
// A sender is a node name; its stream is one boot (boot_id, random per
// process start) whose windows rise. The guard keeps, per node:
//
//   - the current boot and the highest window accepted from it: a window at
//     or below it is kReplayed (a copy, a duplicate, or a reordered packet
//     that lost the race: comparison only wants the newest window anyway);
//   - the last kRetiredBootsPerNode boots it replaced: a datagram from one of
//     them is kStaleBoot (a delayed or replayed packet of a dead process);
//   - the window end time of the last accepted summary: a new boot id starts
//     a new stream only if its window ends later than that, by the sender's
//     own clock. This stops a recorded old boot, older than the retired list
//     remembers, from displacing a live stream. The price: a node whose
//     real-time clock stepped back across its restart is kStaleBoot until its
//     clock passes its old last window (the analyzer sees it as silent).
//
// Callers check authentication first: with a key configured only verified
// datagrams reach Admit, so only the key's holders can start a stream.
//
// Memory is bounded: at most max_senders nodes are tracked; a new node
// evicts the one accepted from least recently (forgetting its replay state,
// which an authenticated sender re-establishes with its next window).
// Not thread-safe: one receiving thread owns it.
#ifndef LIMPWATCH_ANALYZER_PEER_REPLAY_H_
#define LIMPWATCH_ANALYZER_PEER_REPLAY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::analyzer {

class ReplayGuard {
 public:
  static constexpr size_t kDefaultMaxSenders = 1024;
  static constexpr size_t kRetiredBootsPerNode = 4;

  enum class Verdict : uint8_t {
    kAccepted,   // the next window of the current stream
    kNewStream,  // first summary of this node, or of a new boot of it
    kReplayed,
    kStaleBoot,
  };

  explicit ReplayGuard(size_t max_senders = kDefaultMaxSenders);

  // Checks a decoded summary and, when it passes, records it. Returns the
  // verdict; kReplayed and kStaleBoot change nothing.
  Verdict Admit(const PeerSummary& summary);

  size_t tracked_senders() const { return senders_.size(); }
  size_t evictions() const { return evictions_; }

 private:
  struct Stream {
    uint64_t boot_id = 0;
    uint64_t last_window = 0;
    uint64_t last_window_end_unix_ms = 0;
    uint64_t last_admitted = 0;  // admission sequence number, for eviction
    std::array<uint64_t, kRetiredBootsPerNode> retired_boots{};
    size_t retired_count = 0;
  };

  bool IsRetired(const Stream& stream, uint64_t boot_id) const;
  void EvictLeastRecent();

  size_t max_senders_;
  std::unordered_map<std::string, Stream> senders_;
  uint64_t admissions_ = 0;
  size_t evictions_ = 0;
};

// The rejection class of a verdict (kNone when accepted).
DecodeError RejectionOf(ReplayGuard::Verdict verdict);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_REPLAY_H_
