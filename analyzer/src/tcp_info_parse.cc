// The counters limpwatch reads from a struct tcp_info, whatever the length
// the kernel that wrote it knows.
#include <linux/tcp.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "limpwatch/analyzer/tcp_loss_counters.h"

namespace limpwatch::analyzer {
namespace {

// Linux 6.7 appended, after tcpi_snd_wnd (the last field these headers
// know): u32 tcpi_rcv_wnd, u32 tcpi_rehash, u16 tcpi_total_rto,
// u16 tcpi_total_rto_recoveries, u32 tcpi_total_rto_time.
constexpr size_t kTotalRtoTimeOffset = offsetof(tcp_info, tcpi_snd_wnd) + 16;

// States of the kernel's tcp_states.h, which linux/tcp.h does not export.
constexpr uint8_t kListenState = 10;

template <typename Field>
bool Holds(size_t length, size_t offset) {
  return length >= offset + sizeof(Field);
}

}  // namespace

bool ParseTcpInfo(const void* data, size_t length, TcpSocketCounts* counts) {
  // Copied into a zeroed buffer as long as this build's tcp_info and the
  // newer fields: a shorter (older kernel's) structure leaves the rest 0.
  struct {
    tcp_info known;
    uint8_t newer[128];
  } info{};
  std::memcpy(&info, data, std::min(length, sizeof info));
  const tcp_info& known = info.known;
  if (!Holds<decltype(known.tcpi_total_retrans)>(length, offsetof(tcp_info, tcpi_total_retrans))) return false;
  counts->retransmitted = known.tcpi_total_retrans;
  counts->duplicates_reported =
      Holds<decltype(known.tcpi_dsack_dups)>(length, offsetof(tcp_info, tcpi_dsack_dups)) ? known.tcpi_dsack_dups : 0;
  counts->timeout_us = known.tcpi_rto;
  counts->out_of_order =
      Holds<decltype(known.tcpi_rcv_ooopack)>(length, offsetof(tcp_info, tcpi_rcv_ooopack)) ? known.tcpi_rcv_ooopack
                                                                                             : 0;
  counts->timeout_stall_ms = 0;
  if (Holds<uint32_t>(length, kTotalRtoTimeOffset)) {
    uint32_t stalled = 0;
    std::memcpy(&stalled, reinterpret_cast<const uint8_t*>(&info) + kTotalRtoTimeOffset, sizeof stalled);
    counts->timeout_stall_ms = stalled;
  }
  counts->round_trip_us = known.tcpi_rtt;
  counts->listening = known.tcpi_state == kListenState;
  counts->bytes_moved = 0;
  if (Holds<decltype(known.tcpi_bytes_received)>(length, offsetof(tcp_info, tcpi_bytes_received))) {
    counts->bytes_moved = known.tcpi_bytes_acked + known.tcpi_bytes_received;
  }
  return true;
}

}  // namespace limpwatch::analyzer
