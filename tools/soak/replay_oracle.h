// What the host server's replay guard will say about each genuine peer
// summary the proxy hands it, modelled from the rules its documentation
// states (analyzer/peer_replay.h), so that the soak can require the
// server's replayed, stale-boot and accepted counts to be exactly these:
//
//   - per node, the current boot and the highest window accepted from it:
//     a window at or below it is replayed;
//   - a boot replaced by a newer one (the last four remembered) is stale;
//   - another boot id starts a new stream only if its window ends later
//     than the last accepted window's end, else it is stale.
#ifndef LIMPWATCH_TOOLS_SOAK_REPLAY_ORACLE_H_
#define LIMPWATCH_TOOLS_SOAK_REPLAY_ORACLE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>

namespace limpwatch::soak {

enum class ReplayVerdict { kAccepted, kReplayed, kStaleBoot, kNotASummary };

// The fields the guard looks at, read from a datagram's fixed header
// (analyzer/peer_wire.h's table): node name, boot, window, window end.
struct SummaryStamp {
  std::string node;
  uint64_t boot_id = 0;
  uint64_t window = 0;
  uint64_t window_end_unix_ms = 0;
};
bool ReadSummaryStamp(std::span<const uint8_t> datagram, SummaryStamp* stamp);

class ReplayOracle {
 public:
  ReplayVerdict Judge(std::span<const uint8_t> datagram);

 private:
  struct Stream {
    uint64_t boot_id = 0;
    uint64_t last_window = 0;
    uint64_t last_window_end_unix_ms = 0;
    std::deque<uint64_t> replaced_boots;  // newest last, at most four
  };
  std::map<std::string, Stream> streams_;
};

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_REPLAY_ORACLE_H_
