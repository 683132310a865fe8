#include "limpwatch/analyzer/peer_status.h"

#include <algorithm>
#include <iterator>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {

void PublishPeerStatus(const shm::SegmentView& segment, const PeerTable& table, const PeerCounters& counters,
                       uint64_t now_unix_ms) {
  shm::PeerStatusBlock* block = segment.peer_status();
  uint64_t sequence = block->sequence.load(std::memory_order_relaxed);
  if (sequence & 1) ++sequence;  // a writer died mid-update (not this one): start even
  block->sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  const std::vector<PeerLiveness>& peers = table.entries();
  uint32_t listed = uint32_t(std::min<size_t>(peers.size(), shm::kPeerStatusEntries));
  block->updated_unix_ms.store(now_unix_ms, std::memory_order_relaxed);
  block->peers_configured.store(uint32_t(peers.size()), std::memory_order_relaxed);
  block->peers_listed.store(listed, std::memory_order_relaxed);
  block->datagrams_received.store(counters.received, std::memory_order_relaxed);
  block->datagrams_accepted.store(counters.accepted, std::memory_order_relaxed);
  block->datagrams_rejected.store(counters.TotalRejected(), std::memory_order_relaxed);
  block->summaries_sent.store(counters.summaries_sent, std::memory_order_relaxed);
  block->send_errors.store(counters.send_errors, std::memory_order_relaxed);
  for (uint32_t index = 0; index < listed; ++index) {
    const PeerLiveness& peer = peers[index];
    shm::PeerStatusEntry& entry = block->entries[index];
    shm::StoreNameWords(peer.endpoint.name, entry.name, std::size(entry.name));
    entry.heard.store(peer.heard ? 1 : 0, std::memory_order_relaxed);
    entry.last_heard_unix_ms.store(peer.heard ? peer.last_accept_unix_ms : 0, std::memory_order_relaxed);
    entry.accepted.store(peer.accepted, std::memory_order_relaxed);
    entry.lag_ms.store(peer.heard ? int64_t(peer.last_accept_unix_ms) - int64_t(peer.last_window_end_unix_ms) : 0,
                       std::memory_order_relaxed);
    entry.restarts.store(uint32_t(peer.restarts), std::memory_order_relaxed);
  }
  block->sequence.store(sequence + 2, std::memory_order_release);
}

void PublishExchangeShedding(const shm::SegmentView& segment, const PeerCounters& counters, bool io_uring_refused) {
  static_assert(kDecodeErrorCount <= shm::kPeerRejectionClasses, "the segment has a slot for every rejection class");
  shm::AnalyzerShedding* shedding = segment.analyzer_shedding();
  for (size_t index = 1; index < kDecodeErrorCount; ++index) {
    shedding->datagrams_rejected[index].store(counters.rejected[index], std::memory_order_relaxed);
  }
  shedding->datagram_receive_errors.store(counters.receive_errors, std::memory_order_relaxed);
  shedding->exchange_internal_errors.store(counters.internal_errors, std::memory_order_relaxed);
  shedding->replay_senders_forgotten.store(counters.senders_forgotten, std::memory_order_relaxed);
  if (io_uring_refused) shedding->io_uring_refused.fetch_or(shm::kRingOfExchange, std::memory_order_relaxed);
}

}  // namespace limpwatch::analyzer
