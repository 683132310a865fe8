// What the peer exchange did, counted: a snapshot the transport hands out.
// Every datagram received ends either accepted or in exactly one rejection
// class, so received == accepted + TotalRejected() + (datagrams still being
// handled: none between calls).
#ifndef LIMPWATCH_ANALYZER_PEER_COUNTERS_H_
#define LIMPWATCH_ANALYZER_PEER_COUNTERS_H_

#include <array>
#include <cstdint>
#include <string>

#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::analyzer {

struct PeerCounters {
  uint64_t summaries_sent = 0;       // Send calls whose summary was encoded and queued
  uint64_t sends = 0;                // datagrams the kernel took (one per peer per summary)
  uint64_t send_errors = 0;          // datagrams refused or not queued (never blocked for)
  uint64_t encode_errors = 0;        // summaries the encoder refused
  uint64_t received = 0;             // datagrams received
  uint64_t accepted = 0;
  uint64_t accepted_unverified = 0;  // accepted with a tag this receiver has no key to check
  uint64_t new_streams = 0;          // first summary of a node, or of a new boot of it
  uint64_t receive_errors = 0;       // socket or ring errors while receiving
  uint64_t internal_errors = 0;      // exceptions stopped at the API boundary
  uint64_t senders_forgotten = 0;    // senders the full replay table evicted (peer_replay.h)
  std::array<uint64_t, kDecodeErrorCount> rejected{};  // indexed by DecodeError

  uint64_t Rejected(DecodeError error) const { return rejected[static_cast<size_t>(error)]; }
  uint64_t TotalRejected() const;
  uint64_t Malformed() const;  // the IsMalformed classes together

  // "sends=4 send_errors=0 ... rejected.replayed=1 ...": non-zero rejection
  // classes only, for a log line or a metrics endpoint.
  std::string ToString() const;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_COUNTERS_H_
