// Datagrams the soak sends to the host server's peer port that it must
// refuse, one per rejection class the decoder or the sender check gives
// (analyzer/peer_wire.h's DecodeError). The malformed ones carry a valid
// tag (the soak holds the cluster's key), so that they are refused for
// their shape, not their tag. Replayed and stale-boot datagrams are the
// proxy's (udp_fault_proxy.h): they are genuine summaries sent again.
#ifndef LIMPWATCH_TOOLS_SOAK_DATAGRAM_FORGER_H_
#define LIMPWATCH_TOOLS_SOAK_DATAGRAM_FORGER_H_

#include <cstdint>
#include <random>
#include <vector>

#include "limpwatch/analyzer/peer_key.h"
#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::soak {

// The classes a forged datagram from a configured sender can be refused
// for; kUnknownSender needs a sender that is not configured.
inline constexpr analyzer::DecodeError kForgedClasses[] = {
    analyzer::DecodeError::kTruncated,      analyzer::DecodeError::kOversized,
    analyzer::DecodeError::kBadMagic,       analyzer::DecodeError::kForeignVersion,
    analyzer::DecodeError::kBadLength,      analyzer::DecodeError::kBadCount,
    analyzer::DecodeError::kBadNodeName,    analyzer::DecodeError::kBadMetric,
    analyzer::DecodeError::kUnsortedKeys,   analyzer::DecodeError::kNonFiniteValue,
    analyzer::DecodeError::kUnauthenticated, analyzer::DecodeError::kBadAuthentication,
};

class DatagramForger {
 public:
  explicit DatagramForger(analyzer::PeerKey key) : key_(std::move(key)) {}

  // A datagram the host refuses as `refusal` when it comes from a
  // configured peer's address. Any content does for kUnknownSender.
  std::vector<uint8_t> Forge(analyzer::DecodeError refusal, std::mt19937_64& random) const;

 private:
  std::vector<uint8_t> Genuine(std::mt19937_64& random, const analyzer::PeerKey* key) const;
  void Sign(std::vector<uint8_t>* datagram) const;

  analyzer::PeerKey key_;
};

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_DATAGRAM_FORGER_H_
