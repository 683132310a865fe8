// What a server's analyzer hears from its peers (shm::PeerStatusValues), for
// `dump`, `top` and `list`.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_PEER_VIEW_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_PEER_VIEW_H_

#include <cstdint>
#include <string>

#include "json_writer.h"
#include "limpwatch/shm/snapshot.h"

namespace limpwatch::cli {

// "PEERS ..." section: the totals, then one row per listed peer (last
// summary heard, how long ago, summaries accepted, lag, restarts).
std::string RenderPeerStatusText(const shm::PeerStatusValues& peers, uint64_t now_unix_ms);

// "peers": {...} or null when the segment has no exchanging analyzer.
void WritePeerStatusJson(JsonWriter* json, const shm::PeerStatusValues& peers);

// A peer heard within this long counts as heard: five ticks, the
// analyzer's default silence bar, at the default tick.
inline constexpr uint64_t kRecentlyHeardMs = 5000;

// "ANALYZER ..." section: its ticks and windows, and every place it could
// not do its work (failed ticks, summaries not sent, writes the recording
// or the alarms file lost, ticks missed, late summaries, refused io_uring,
// peer datagrams rejected by class), so "no alarm" can be told from "could
// not look".
std::string RenderAnalyzerHealthText(const shm::AnalyzerHealthValues& health,
                                     const shm::AnalyzerSheddingValues& shedding);
void WriteAnalyzerHealthJson(JsonWriter* json, const shm::AnalyzerHealthValues& health,
                             const shm::AnalyzerSheddingValues& shedding);

// For `top`: "peers 2/3 heard in the last 5 s; datagrams +8 accepted, +0
// rejected; not heard: c" and a newline, or "" without an exchange.
std::string PeerStatusLine(const shm::PeerStatusValues& before, const shm::PeerStatusValues& after,
                           uint64_t now_unix_ms, uint64_t recent_ms);

// "3/3" (peers heard in the last `recent_ms` / configured), or "-".
std::string PeersHeardCell(const shm::PeerStatusValues& peers, uint64_t now_unix_ms, uint64_t recent_ms);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_PEER_VIEW_H_
