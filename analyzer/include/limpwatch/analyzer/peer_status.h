// Publishes what this server hears from its peers into its own segment
// (shm::PeerStatusBlock), once a tick, for `limpwatch dump`, `top` and
// `list`: whether the analyzers hear each other is otherwise visible only
// through an alarm another server reported.
#ifndef LIMPWATCH_ANALYZER_PEER_STATUS_H_
#define LIMPWATCH_ANALYZER_PEER_STATUS_H_

#include <cstdint>

#include "limpwatch/analyzer/peer_counters.h"
#include "limpwatch/analyzer/peer_table.h"
#include "limpwatch/shm/segment.h"

namespace limpwatch::analyzer {

void PublishPeerStatus(const shm::SegmentView& segment, const PeerTable& table, const PeerCounters& counters,
                       uint64_t now_unix_ms);

// The exchange's share of shm::AnalyzerShedding: rejected datagrams by
// class, failed receives, internal errors, forgotten senders, and whether
// the kernel refused its io_uring.
void PublishExchangeShedding(const shm::SegmentView& segment, const PeerCounters& counters, bool io_uring_refused);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_STATUS_H_
