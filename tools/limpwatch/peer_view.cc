#include "peer_view.h"

#include <vector>

#include "format.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "table.h"

namespace limpwatch::cli {

std::string RenderPeerStatusText(const shm::PeerStatusValues& peers, uint64_t now_unix_ms) {
  std::string out = "PEERS (what this server's analyzer hears from them)\n";
  if (!peers.valid) return out + "(no exchange: no analyzer, or no peers configured)\n";
  out += "updated " + FormatLocalTime(peers.updated_unix_ms * 1000000, true) + "; " +
         std::to_string(peers.peers_configured) + " configured; datagrams received " +
         std::to_string(peers.datagrams_received) + ", accepted " + std::to_string(peers.datagrams_accepted) +
         ", rejected " + std::to_string(peers.datagrams_rejected) + "; summaries sent " +
         std::to_string(peers.summaries_sent) + ", send errors " + std::to_string(peers.send_errors) + "\n";
  Table table({{"PEER"},
               {"LAST HEARD"},
               {"AGO s", Align::kRight},
               {"ACCEPTED", Align::kRight},
               {"LAG ms", Align::kRight},
               {"RESTARTS", Align::kRight}});
  for (const shm::PeerStatusRow& peer : peers.peers) {
    if (!peer.heard) {
      table.AddRow({peer.name, "never", "-", "0", "-", "0"});
      continue;
    }
    double ago = now_unix_ms > peer.last_heard_unix_ms ? double(now_unix_ms - peer.last_heard_unix_ms) / 1e3 : 0;
    table.AddRow({peer.name, FormatLocalTime(peer.last_heard_unix_ms * 1000000, true), FormatFixed(ago, 1),
                  std::to_string(peer.accepted), std::to_string(peer.lag_ms), std::to_string(peer.restarts)});
  }
  out += table.Render();
  if (peers.peers_configured > peers.peers.size()) {
    out += "(" + std::to_string(peers.peers_configured - peers.peers.size()) + " more peers not listed)\n";
  }
  out += "LAG: from the end of the window a summary covers (the peer's clock) to its arrival here (this clock): "
         "a peer whose lag differs from the others' by a second or more has a clock that is off\n";
  return out;
}

void WritePeerStatusJson(JsonWriter* json, const shm::PeerStatusValues& peers) {
  json->Key("peers");
  if (!peers.valid) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Field("updated_unix_ms", peers.updated_unix_ms);
  json->Field("configured", peers.peers_configured);
  json->Field("datagrams_received", peers.datagrams_received);
  json->Field("datagrams_accepted", peers.datagrams_accepted);
  json->Field("datagrams_rejected", peers.datagrams_rejected);
  json->Field("summaries_sent", peers.summaries_sent);
  json->Field("send_errors", peers.send_errors);
  json->Key("listed");
  json->BeginArray();
  for (const shm::PeerStatusRow& peer : peers.peers) {
    json->BeginObject();
    json->Field("name", peer.name);
    json->Field("heard", peer.heard);
    json->Field("last_heard_unix_ms", peer.last_heard_unix_ms);
    json->Field("accepted", peer.accepted);
    json->Key("lag_ms");
    json->Int(peer.lag_ms);
    json->Field("restarts", peer.restarts);
    json->EndObject();
  }
  json->EndArray();
  json->EndObject();
}

namespace {

bool HeardRecently(const shm::PeerStatusRow& peer, uint64_t now_unix_ms, uint64_t recent_ms) {
  return peer.heard && peer.last_heard_unix_ms + recent_ms >= now_unix_ms;
}

const char* PathName(shm::AnalyzerPath path) {
  switch (path) {
    case shm::AnalyzerPath::kIoUring: return "io_uring";
    case shm::AnalyzerPath::kPlainCalls: return "plain system calls";
    case shm::AnalyzerPath::kNone: break;
  }
  return "none";
}

// A rejection class's name as the analyzer counts it; a slot a newer
// writer added is named by its number.
std::string RejectionClassName(uint32_t index) {
  if (index < analyzer::kDecodeErrorCount) return analyzer::DecodeErrorName(static_cast<analyzer::DecodeError>(index));
  return "class " + std::to_string(index);
}

std::vector<std::string> RefusedRings(uint32_t bits) {
  std::vector<std::string> rings;
  if (bits & shm::kRingOfExchange) rings.push_back("peer exchange");
  if (bits & shm::kRingOfRecording) rings.push_back("recording");
  if (bits & shm::kRingOfAlarmsFile) rings.push_back("alarms file");
  return rings;
}

std::string JoinedOr(const std::vector<std::string>& parts, const std::string& empty) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text.empty() ? empty : text;
}

}  // namespace

std::string RenderAnalyzerHealthText(const shm::AnalyzerHealthValues& health,
                                     const shm::AnalyzerSheddingValues& shedding) {
  std::string out = "ANALYZER (in this process)\n";
  if (!health.valid) return out + "(not running: LIMPWATCH_ANALYZE is not set, or it has not ticked yet)\n";
  Table fields({{"FIELD"}, {"VALUE", Align::kRight}});
  fields.AddRow({"ticks", std::to_string(health.ticks)});
  fields.AddRow({"ticks failed (skipped)", std::to_string(health.tick_failures)});
  fields.AddRow({"windows compared", std::to_string(health.windows_analyzed)});
  fields.AddRow({"peer exchange", PathName(health.exchange_path)});
  fields.AddRow({"summaries not sent (encoder refused)", std::to_string(health.summaries_unsent)});
  fields.AddRow({"recording", health.recording_path == shm::AnalyzerPath::kNone
                                  ? std::string("off")
                                  : std::string("writes by ") + PathName(health.recording_path)});
  fields.AddRow({"recording writes lost", std::to_string(health.recording_failed_writes)});
  fields.AddRow({"alarms file writes lost", std::to_string(health.alarms_failed_writes)});
  fields.AddRow({"ticks missed (a tick ran late)", std::to_string(shedding.ticks_missed)});
  fields.AddRow({"peer summaries too late to compare", std::to_string(shedding.summaries_late)});
  fields.AddRow({"io_uring refused by the kernel", JoinedOr(RefusedRings(shedding.io_uring_refused), "nowhere")});
  std::vector<std::string> rejected;
  for (uint32_t index = 1; index < shm::kPeerRejectionClasses; ++index) {
    if (shedding.datagrams_rejected[index] == 0) continue;
    rejected.push_back(RejectionClassName(index) + " " + std::to_string(shedding.datagrams_rejected[index]));
  }
  fields.AddRow({"peer datagrams rejected, by class", JoinedOr(rejected, "none")});
  fields.AddRow({"peer datagram receives failed", std::to_string(shedding.datagram_receive_errors)});
  fields.AddRow({"peer exchange internal errors", std::to_string(shedding.exchange_internal_errors)});
  fields.AddRow({"peers forgotten by the full replay table", std::to_string(shedding.replay_senders_forgotten)});
  return out + fields.Render();
}

void WriteAnalyzerHealthJson(JsonWriter* json, const shm::AnalyzerHealthValues& health,
                             const shm::AnalyzerSheddingValues& shedding) {
  json->Key("analyzer");
  if (!health.valid) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Field("ticks", health.ticks);
  json->Field("tick_failures", health.tick_failures);
  json->Field("windows_analyzed", health.windows_analyzed);
  json->Field("exchange_path", PathName(health.exchange_path));
  json->Field("summaries_unsent", health.summaries_unsent);
  json->Field("recording_path", PathName(health.recording_path));
  json->Field("recording_failed_writes", health.recording_failed_writes);
  json->Field("alarms_failed_writes", health.alarms_failed_writes);
  json->Field("ticks_missed", shedding.ticks_missed);
  json->Field("summaries_late", shedding.summaries_late);
  json->Key("io_uring_refused");
  json->BeginArray();
  for (const std::string& ring : RefusedRings(shedding.io_uring_refused)) json->String(ring);
  json->EndArray();
  json->Key("datagrams_rejected");
  json->BeginObject();
  for (uint32_t index = 1; index < shm::kPeerRejectionClasses; ++index) {
    if (index >= analyzer::kDecodeErrorCount && shedding.datagrams_rejected[index] == 0) continue;
    json->Field(RejectionClassName(index), shedding.datagrams_rejected[index]);
  }
  json->EndObject();
  json->Field("datagram_receive_errors", shedding.datagram_receive_errors);
  json->Field("exchange_internal_errors", shedding.exchange_internal_errors);
  json->Field("replay_senders_forgotten", shedding.replay_senders_forgotten);
  json->EndObject();
}

std::string PeerStatusLine(const shm::PeerStatusValues& before, const shm::PeerStatusValues& after,
                           uint64_t now_unix_ms, uint64_t recent_ms) {
  if (!after.valid) return "";
  std::string silent;
  for (const shm::PeerStatusRow& peer : after.peers) {
    if (!HeardRecently(peer, now_unix_ms, recent_ms)) silent += (silent.empty() ? "" : ", ") + peer.name;
  }
  auto added = [&](uint64_t earlier, uint64_t later) {
    return "+" + std::to_string(before.valid && later >= earlier ? later - earlier : later);
  };
  return "peers " + PeersHeardCell(after, now_unix_ms, recent_ms) + " heard in the last " +
         std::to_string(recent_ms / 1000) + " s; datagrams " +
         added(before.datagrams_accepted, after.datagrams_accepted) + " accepted, " +
         added(before.datagrams_rejected, after.datagrams_rejected) + " rejected" +
         (silent.empty() ? "" : "; not heard: " + silent) + "\n";
}

std::string PeersHeardCell(const shm::PeerStatusValues& peers, uint64_t now_unix_ms, uint64_t recent_ms) {
  if (!peers.valid) return "-";
  uint32_t recent = 0;
  for (const shm::PeerStatusRow& peer : peers.peers) {
    if (HeardRecently(peer, now_unix_ms, recent_ms)) ++recent;
  }
  std::string cell = std::to_string(recent) + "/" + std::to_string(peers.peers_configured);
  if (peers.peers_configured > peers.peers.size()) cell += "+";  // the unlisted ones are not counted
  return cell;
}

}  // namespace limpwatch::cli
