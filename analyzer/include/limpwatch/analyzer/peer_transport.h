// The peer exchange: sends this server's summary of each window to every
// peer over UDP and receives theirs, checked and counted.
//
// Use, on the analyzer thread:
//
//   std::vector<std::string> problems;
//   auto transport = PeerTransport::CreateFromEnvironment(&problems);
//   // log each problem; a null transport means: run without peers
//   ...once per window:
//   transport->Send(summary);                        // never blocks
//   for (auto& received : transport->Poll(timeout))  // returns at the first datagrams, or at timeout
//     compare(received.summary);
//   transport->peer_table().SilentWindows(i, MonotonicNowNs(), window_ns);  // crash / hang alarms
//   transport->counters();                           // any thread
//
// A received datagram is accepted only when it passes, in order: a known
// source address (unknown_sender), the size bound (oversized), the decoder
// (truncated .. bad_authentication, see peer_wire.h) and the replay guard
// (replayed, stale_boot). Every rejection is counted in its class and the
// last one is kept as a line for the log.
//
// Nothing here throws: errors are results and counters. Not thread-safe
// except counters(): one thread sends and polls.
#ifndef LIMPWATCH_ANALYZER_PEER_TRANSPORT_H_
#define LIMPWATCH_ANALYZER_PEER_TRANSPORT_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/datagram_channel.h"
#include "limpwatch/analyzer/peer_config.h"
#include "limpwatch/analyzer/peer_counters.h"
#include "limpwatch/analyzer/peer_key.h"
#include "limpwatch/analyzer/peer_replay.h"
#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/peer_table.h"
#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::analyzer {

struct PeerTransportOptions {
  PeerAddress bind;                  // port 0 binds an ephemeral port (tests)
  std::vector<PeerEndpoint> peers;   // where to send, and whom to accept from (not this server)
  std::optional<PeerKey> key;        // with a key: tag everything, accept only verified datagrams
  IoPreference io = IoPreference::kAuto;
  bool accept_unknown_senders = false;  // accept sources outside `peers` (they get no liveness entry)
  size_t max_tracked_senders = ReplayGuard::kDefaultMaxSenders;
  size_t max_datagrams_per_poll = 256;  // bounds the work of one Poll
  // A peer that left (SetPeers) is still sent to while it sends here, until
  // it was not heard for this many sends: as long as it would not yet call
  // this server silent (AnalyzerConfig::peer_silence_windows).
  uint64_t former_peer_sends = AnalyzerConfig{}.peer_silence_windows;
  // Every configured server, this one included; more than peers + 1 when the
  // peers are this server's comparison group (comparison_group.h). 0: not known.
  size_t cluster_servers = 0;
  std::string kind;  // this server's kind (peer_config.h), "" for none
  // PeerConfig::Scorers(): who compares this server and each of its peers.
  std::map<std::string, std::vector<std::string>> scorers;
};

struct ReceivedSummary {
  PeerSummary summary;
  PeerAddress source;
  int peer_index = -1;  // in the configured peers; -1 for an accepted unknown sender
  Authentication authentication = Authentication::kNone;
  bool new_stream = false;  // first summary heard from this node, or from a new boot of it
};

struct SendReport {
  EncodeError encode_error = EncodeError::kNone;
  size_t datagram_bytes = 0;
  size_t destinations = 0;  // peers it was queued for
};

class PeerTransport {
 public:
  // Opens and binds the socket (io_uring, or plain sockets when refused).
  // Null with a one-line *error when the socket cannot be bound or a peer
  // cannot be reached from the bind address's family.
  static std::unique_ptr<PeerTransport> Create(PeerTransportOptions options, std::string* error);

  // Everything from the environment (peer_config.h, peer_key.h,
  // LIMPWATCH_IO_URING). *problems gets one line per configuration error.
  // Null when there is nothing to exchange with, no bind address, or a key
  // file is named but unusable (never a silent fall-back to no
  // authentication).
  static std::unique_ptr<PeerTransport> CreateFromEnvironment(std::vector<std::string>* problems);
  // The same from a configuration already read (its errors are the
  // caller's to report); the key still comes from the environment.
  static std::unique_ptr<PeerTransport> CreateFromConfig(const PeerConfig& config, std::vector<std::string>* problems);

  ~PeerTransport();
  PeerTransport(const PeerTransport&) = delete;
  PeerTransport& operator=(const PeerTransport&) = delete;

  // Encodes `summary` once and queues it to every peer. Never blocks.
  SendReport Send(const PeerSummary& summary);

  // The summaries accepted since the last call. Waits at most `timeout` for
  // the first datagram, then takes whatever else is already there (up to
  // max_datagrams_per_poll datagrams). A zero timeout never waits.
  std::vector<ReceivedSummary> Poll(std::chrono::nanoseconds timeout);

  // Replaces the peers; a peer that stays (same name and address) keeps its
  // liveness entry, and the replay state of every sender is kept (a peer
  // that leaves and comes back cannot be replayed its old summaries). A peer
  // that leaves is still sent to while it keeps sending (former_peer_sends).
  // False with *error, and nothing changed, when a peer cannot be reached
  // from this socket.
  bool SetPeers(std::vector<PeerEndpoint> peers, std::string* error);

  // A new configuration (peer_membership.h): its peers (SetPeers), cluster
  // size, this server's kind and the scorers of its group.
  bool ApplyConfig(const PeerConfig& config, std::string* error);

  PeerCounters counters() const;             // any thread
  const PeerTable& peer_table() const;       // the polling thread
  std::string last_rejection() const;        // "" or one line: source, class, explanation
  IoPath io_path() const;
  const std::string& fallback_reason() const;  // why not io_uring ("" when it is io_uring, or not wanted)
  bool io_uring_refused() const;  // wanted (kAuto, LIMPWATCH_IO_URING not off), and the kernel refused it
  PeerAddress local_address() const;
  bool authenticated() const;  // datagrams are tagged and checked with a key
  size_t cluster_servers() const;  // PeerTransportOptions::cluster_servers
  const std::string& kind() const;  // PeerTransportOptions::kind
  std::vector<std::string> ScorersOf(const std::string& server) const;  // PeerTransportOptions::scorers

 private:
  class Impl;
  explicit PeerTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_TRANSPORT_H_
