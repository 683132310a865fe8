#include "limpwatch/analyzer/peer_transport.h"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace limpwatch::analyzer {

namespace {

// Counters written by the polling thread and read by any: relaxed atomics,
// each exact on its own (a snapshot is not one instant across all of them).
struct AtomicCounters {
  std::atomic<uint64_t> summaries_sent{0};
  std::atomic<uint64_t> encode_errors{0};
  std::atomic<uint64_t> received{0};
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> accepted_unverified{0};
  std::atomic<uint64_t> new_streams{0};
  std::atomic<uint64_t> internal_errors{0};
  std::atomic<uint64_t> senders_forgotten{0};  // the replay guard's evictions, mirrored after each Poll
  // Mirrors of the channel's own counters, refreshed after each call.
  std::atomic<uint64_t> sends{0};
  std::atomic<uint64_t> send_errors{0};
  std::atomic<uint64_t> receive_errors{0};
  std::array<std::atomic<uint64_t>, kDecodeErrorCount> rejected{};
};

void Bump(std::atomic<uint64_t>& counter) { counter.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

class PeerTransport::Impl {
 public:
  Impl(PeerTransportOptions options, std::unique_ptr<DatagramChannel> channel, std::string fallback_reason)
      : options_(std::move(options)),
        channel_(std::move(channel)),
        fallback_reason_(std::move(fallback_reason)),
        replay_(options_.max_tracked_senders),
        table_({}, MonotonicNowNs()) {}

  bool keyed() const { return options_.key.has_value(); }
  size_t cluster_servers() const { return options_.cluster_servers; }
  const std::string& kind() const { return options_.kind; }
  std::vector<std::string> ScorersOf(const std::string& server) const {
    auto found = options_.scorers.find(server);
    return found == options_.scorers.end() ? std::vector<std::string>{} : found->second;
  }

  bool SetPeers(std::vector<PeerEndpoint> peers, std::string* error) {
    std::vector<DatagramDestination> destinations;
    destinations.reserve(peers.size());
    for (const auto& peer : peers) {
      DatagramDestination destination = channel_->DestinationFor(peer.address);
      if (destination.length == 0) {
        *error = "peer " + peer.name + " (" + peer.address.ToString() + ", " + peer.origin +
                 ") is IPv6 but the bind address " + channel_->local_address().ToString() +
                 " is IPv4: bind to [::]:<port> to reach both";
        return false;
      }
      destinations.push_back(destination);
    }
    // The peers that leave become former peers (FormerPeer below); one
    // listed again is a peer again.
    auto listed = [&](const PeerAddress& address) {
      return std::any_of(peers.begin(), peers.end(), [&](const PeerEndpoint& peer) { return peer.address == address; });
    };
    std::erase_if(formers_, [&](const FormerPeer& former) { return listed(former.address); });
    for (size_t index = 0; index < table_.entries().size(); ++index) {
      const PeerAddress& address = table_.entries()[index].endpoint.address;
      if (!listed(address)) formers_.push_back({address, destinations_[index], sends_});
    }
    destinations_ = std::move(destinations);
    table_ = PeerTable(std::move(peers), MonotonicNowNs(), &table_);
    return true;
  }

  bool ApplyConfig(const PeerConfig& config, std::string* error) {
    if (!SetPeers(config.Peers(), error)) return false;
    options_.cluster_servers = config.servers.size();
    options_.kind = config.self ? config.servers[*config.self].kind : std::string();
    options_.scorers = config.Scorers();
    return true;
  }

  SendReport Send(const PeerSummary& summary) {
    SendReport report;
    report.encode_error = EncodeSummary(summary, options_.key ? &*options_.key : nullptr, &datagram_);
    if (report.encode_error != EncodeError::kNone) {
      Bump(counters_.encode_errors);
      return report;
    }
    report.datagram_bytes = datagram_.size();
    ++sends_;
    std::erase_if(formers_,
                  [&](const FormerPeer& former) { return sends_ - former.heard_at_send > options_.former_peer_sends; });
    const std::vector<DatagramDestination>* destinations = &destinations_;
    if (!formers_.empty()) {
      all_destinations_ = destinations_;
      for (const FormerPeer& former : formers_) all_destinations_.push_back(former.destination);
      destinations = &all_destinations_;
    }
    report.destinations = destinations->size();
    channel_->SendToAll(datagram_, *destinations);
    Bump(counters_.summaries_sent);
    MirrorChannelCounters();
    return report;
  }

  std::vector<ReceivedSummary> Poll(std::chrono::nanoseconds timeout) {
    std::vector<ReceivedSummary> accepted;
    received_.clear();
    channel_->Poll(timeout.count(), options_.max_datagrams_per_poll, &received_);
    MirrorChannelCounters();
    int64_t now_ns = MonotonicNowNs();
    uint64_t now_ms = RealtimeNowMs();
    for (ReceivedDatagram& datagram : received_) {
      Bump(counters_.received);
      ReceivedSummary result;
      DecodeError error = Admit(datagram, &result);
      if (error != DecodeError::kNone) {
        Reject(error, datagram.source);
        continue;
      }
      Bump(counters_.accepted);
      if (result.authentication == Authentication::kUnverified) Bump(counters_.accepted_unverified);
      if (result.new_stream) Bump(counters_.new_streams);
      if (result.peer_index >= 0) {
        table_.RecordAccepted(static_cast<size_t>(result.peer_index), result.summary, now_ns, now_ms);
      }
      accepted.push_back(std::move(result));
    }
    counters_.senders_forgotten.store(replay_.evictions(), std::memory_order_relaxed);
    return accepted;
  }

  PeerCounters Snapshot() const {
    auto load = [](const std::atomic<uint64_t>& counter) { return counter.load(std::memory_order_relaxed); };
    PeerCounters snapshot;
    snapshot.summaries_sent = load(counters_.summaries_sent);
    snapshot.sends = load(counters_.sends);
    snapshot.send_errors = load(counters_.send_errors);
    snapshot.encode_errors = load(counters_.encode_errors);
    snapshot.received = load(counters_.received);
    snapshot.accepted = load(counters_.accepted);
    snapshot.accepted_unverified = load(counters_.accepted_unverified);
    snapshot.new_streams = load(counters_.new_streams);
    snapshot.receive_errors = load(counters_.receive_errors);
    snapshot.internal_errors = load(counters_.internal_errors);
    snapshot.senders_forgotten = load(counters_.senders_forgotten);
    for (size_t i = 0; i < kDecodeErrorCount; ++i) snapshot.rejected[i] = load(counters_.rejected[i]);
    return snapshot;
  }

  void CountInternalError() { Bump(counters_.internal_errors); }

  std::string last_rejection() const {
    std::lock_guard lock(last_rejection_mutex_);
    return last_rejection_;
  }

  const PeerTable& table() const { return table_; }
  const DatagramChannel& channel() const { return *channel_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  bool io_uring_refused() const {
    return options_.io == IoPreference::kAuto && channel_->path() == IoPath::kPlainSockets && !IoUringForcedOff();
  }

 private:
  DecodeError Admit(ReceivedDatagram& datagram, ReceivedSummary* result) {
    result->source = datagram.source;
    result->peer_index = table_.Find(datagram.source);
    if (result->peer_index < 0) {
      for (FormerPeer& former : formers_) {
        if (former.address == datagram.source) former.heard_at_send = sends_;
      }
    }
    if (result->peer_index < 0 && !options_.accept_unknown_senders) return DecodeError::kUnknownSender;
    // A datagram cut by the receive buffer is longer than any summary.
    if (datagram.wire_size != datagram.bytes.size()) return DecodeError::kOversized;
    DecodeResult decoded = DecodeSummary(datagram.bytes, options_.key ? &*options_.key : nullptr);
    if (!decoded.ok()) return decoded.error;
    ReplayGuard::Verdict verdict = replay_.Admit(decoded.decoded.summary);
    if (DecodeError replay = RejectionOf(verdict); replay != DecodeError::kNone) return replay;
    result->summary = std::move(decoded.decoded.summary);
    result->authentication = decoded.decoded.authentication;
    result->new_stream = verdict == ReplayGuard::Verdict::kNewStream;
    return DecodeError::kNone;
  }

  void Reject(DecodeError error, const PeerAddress& source) {
    Bump(counters_.rejected[static_cast<size_t>(error)]);
    std::string line = "peer datagram from " + source.ToString() + " rejected: " + DecodeErrorMessage(error);
    std::lock_guard lock(last_rejection_mutex_);
    last_rejection_ = std::move(line);
  }

  void MirrorChannelCounters() {
    const ChannelCounters& channel = channel_->counters();
    counters_.sends.store(channel.sent, std::memory_order_relaxed);
    counters_.send_errors.store(channel.send_errors, std::memory_order_relaxed);
    counters_.receive_errors.store(channel.receive_errors, std::memory_order_relaxed);
  }

  PeerTransportOptions options_;
  std::unique_ptr<DatagramChannel> channel_;
  std::string fallback_reason_;
  std::vector<DatagramDestination> destinations_;
  // A peer that left this server's group while it may still list this one
  // (its copy of the configuration not changed yet): this server keeps
  // sending to it while it keeps sending here, so that it does not see this
  // server fall silent. Its datagrams are still refused (unknown_sender).
  struct FormerPeer {
    PeerAddress address;
    DatagramDestination destination;
    uint64_t heard_at_send = 0;  // sends_ when it was last heard (or left)
  };
  std::vector<FormerPeer> formers_;
  std::vector<DatagramDestination> all_destinations_;  // reused: the peers and the former peers
  uint64_t sends_ = 0;
  ReplayGuard replay_;
  PeerTable table_;
  std::vector<uint8_t> datagram_;           // reused encode buffer
  std::vector<ReceivedDatagram> received_;  // reused receive list
  AtomicCounters counters_;
  mutable std::mutex last_rejection_mutex_;
  std::string last_rejection_;
};

PeerTransport::PeerTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PeerTransport::~PeerTransport() = default;

std::unique_ptr<PeerTransport> PeerTransport::Create(PeerTransportOptions options, std::string* error) {
  try {
    std::string fallback_reason;
    auto channel = OpenDatagramChannel({options.bind, options.io}, &fallback_reason, error);
    if (!channel) return nullptr;
    std::vector<PeerEndpoint> peers = std::move(options.peers);
    options.peers.clear();
    auto impl = std::make_unique<Impl>(std::move(options), std::move(channel), std::move(fallback_reason));
    if (!impl->SetPeers(std::move(peers), error)) return nullptr;
    return std::unique_ptr<PeerTransport>(new PeerTransport(std::move(impl)));
  } catch (const std::exception& exception) {
    *error = std::string("peer transport: ") + exception.what();
    return nullptr;
  }
}

std::unique_ptr<PeerTransport> PeerTransport::CreateFromEnvironment(std::vector<std::string>* problems) {
  try {
    PeerConfig config = LoadPeerConfig(PeerConfigSources::FromEnvironment());
    problems->insert(problems->end(), config.errors.begin(), config.errors.end());
    return CreateFromConfig(config, problems);
  } catch (const std::exception& exception) {
    problems->push_back(std::string("peer exchange disabled: ") + exception.what());
    return nullptr;
  }
}

std::unique_ptr<PeerTransport> PeerTransport::CreateFromConfig(const PeerConfig& config,
                                                              std::vector<std::string>* problems) {
  try {
    std::string error;
    std::optional<PeerKey> key = LoadPeerKeyFromEnvironment(&error);
    if (!error.empty()) {
      problems->push_back(error + "; peer exchange disabled rather than run unauthenticated");
      return nullptr;
    }
    std::optional<PeerAddress> bind = config.BindAddress();
    if (!bind || config.Peers().empty()) {
      if (!config.servers.empty() || bind) problems->push_back("peer exchange disabled: no peers or no bind address");
      return nullptr;
    }
    PeerTransportOptions options;
    options.bind = *bind;
    options.key = std::move(key);
    auto transport = Create(std::move(options), &error);
    if (transport && !transport->ApplyConfig(config, &error)) transport.reset();
    if (!transport) problems->push_back("peer exchange disabled: " + error);
    return transport;
  } catch (const std::exception& exception) {
    problems->push_back(std::string("peer exchange disabled: ") + exception.what());
    return nullptr;
  }
}

SendReport PeerTransport::Send(const PeerSummary& summary) {
  try {
    return impl_->Send(summary);
  } catch (...) {
    impl_->CountInternalError();
    return {};
  }
}

std::vector<ReceivedSummary> PeerTransport::Poll(std::chrono::nanoseconds timeout) {
  try {
    return impl_->Poll(timeout);
  } catch (...) {
    impl_->CountInternalError();
    return {};
  }
}

bool PeerTransport::SetPeers(std::vector<PeerEndpoint> peers, std::string* error) {
  try {
    return impl_->SetPeers(std::move(peers), error);
  } catch (const std::exception& exception) {
    impl_->CountInternalError();
    *error = exception.what();
    return false;
  }
}

bool PeerTransport::ApplyConfig(const PeerConfig& config, std::string* error) {
  try {
    return impl_->ApplyConfig(config, error);
  } catch (const std::exception& exception) {
    impl_->CountInternalError();
    *error = exception.what();
    return false;
  }
}

PeerCounters PeerTransport::counters() const { return impl_->Snapshot(); }
const PeerTable& PeerTransport::peer_table() const { return impl_->table(); }
std::string PeerTransport::last_rejection() const { return impl_->last_rejection(); }
IoPath PeerTransport::io_path() const { return impl_->channel().path(); }
const std::string& PeerTransport::fallback_reason() const { return impl_->fallback_reason(); }
bool PeerTransport::io_uring_refused() const { return impl_->io_uring_refused(); }
PeerAddress PeerTransport::local_address() const { return impl_->channel().local_address(); }
bool PeerTransport::authenticated() const { return impl_->keyed(); }
size_t PeerTransport::cluster_servers() const { return impl_->cluster_servers(); }
const std::string& PeerTransport::kind() const { return impl_->kind(); }
std::vector<std::string> PeerTransport::ScorersOf(const std::string& server) const { return impl_->ScorersOf(server); }

}  // namespace limpwatch::analyzer
