#include "limpwatch/analyzer/transport_exchange.h"

#include <chrono>
#include <cstdint>
#include <utility>

#include "limpwatch/analyzer/peer_status.h"

namespace limpwatch::analyzer {
namespace {

constexpr size_t kPeersNamed = 8;  // in the start line; the others are counted

std::string SecondsText(int64_t nanoseconds) {
  int64_t tenths = nanoseconds / 100'000'000;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

class TransportExchange : public SummaryExchange {
 public:
  TransportExchange(std::unique_ptr<PeerTransport> transport, std::unique_ptr<PeerMembership> membership,
                    std::function<void(const std::string&)> log, std::chrono::nanoseconds no_peer_heard)
      : transport_(std::move(transport)),
        membership_(std::move(membership)),
        log_(std::move(log)),
        no_peer_heard_ns_(no_peer_heard.count()),
        last_heard_ns_(MonotonicNowNs()) {}

  std::string Describe() const override {
    const auto& peers = transport_->peer_table().entries();
    std::string names;
    for (size_t index = 0; index < peers.size() && index < kPeersNamed; ++index) {
      names += (index == 0 ? "" : ", ") + peers[index].endpoint.name;
    }
    if (peers.size() > kPeersNamed) names += ", and " + std::to_string(peers.size() - kPeersNamed) + " more";
    std::string group;
    if (transport_->cluster_servers() > peers.size() + 1) {
      std::string kind = transport_->kind().empty() ? "" : " of kind " + transport_->kind();
      group = ", the comparison group of " + std::to_string(peers.size()) + kind + " among the cluster's " +
              std::to_string(transport_->cluster_servers()) + " servers";
    }
    return std::to_string(peers.size()) + " (" + names + group + ") over " + IoPathName(transport_->io_path()) +
           " on " + transport_->local_address().ToString() +
           (transport_->authenticated() ? ", authenticated" : ", no key");
  }

  std::vector<std::string> ScorersOf(const std::string& server) const override {
    return transport_->ScorersOf(server);
  }

  void Send(const PeerSummary& summary) override {
    SendReport report = transport_->Send(summary);
    if (report.encode_error != EncodeError::kNone) {
      log_(std::string("analyzer: summary of window ") + std::to_string(summary.window) +
           " not sent: " + EncodeErrorMessage(report.encode_error));
    }
  }

  std::vector<PeerSummary> Receive() override {
    FollowMembership();
    std::vector<PeerSummary> summaries;
    for (ReceivedSummary& received : transport_->Poll(std::chrono::nanoseconds(0))) {
      if (!withdrawn_) summaries.push_back(std::move(received.summary));
    }
    if (withdrawn_) return summaries;  // retired: drained, compared with nobody
    ReportSilence(!summaries.empty());
    std::string rejection = transport_->last_rejection();
    if (!rejection.empty() && rejection != last_logged_rejection_) {
      log_("analyzer: peer datagram rejected: " + rejection);
      last_logged_rejection_ = rejection;
    }
    return summaries;
  }

  PeerSummary AsReceived(const PeerSummary& summary) const override { return WireRoundTrip(summary); }

  std::vector<std::string> TakeDeparted() override { return std::exchange(departed_, {}); }

  void PublishStatus(const shm::SegmentView& segment) override {
    PeerCounters counters = transport_->counters();
    PublishPeerStatus(segment, transport_->peer_table(), counters, RealtimeNowMs());
    PublishExchangeShedding(segment, counters, transport_->io_uring_refused());
    shm::AnalyzerHealth* health = segment.analyzer_health();
    health->summaries_unsent.store(counters.encode_errors, std::memory_order_relaxed);
    health->exchange_path.store(uint32_t(transport_->io_path() == IoPath::kIoUring ? shm::AnalyzerPath::kIoUring
                                                                                  : shm::AnalyzerPath::kPlainCalls),
                                std::memory_order_relaxed);
  }

 private:
  // A changed configuration file becomes this exchange's peers, and the
  // peers that left are handed to the analyzer to forget.
  void FollowMembership() {
    if (!membership_) return;
    auto change = membership_->Recheck(
        [&](const PeerConfig& config, std::string* error) { return transport_->ApplyConfig(config, error); });
    if (!change) return;
    const auto& peers = transport_->peer_table().entries();
    log_("analyzer: " + change->Describe(peers.size()) + (change->applied ? "; now comparing with " + Describe() : ""));
    if (change->withdrawn && !withdrawn_) {
      for (const PeerLiveness& peer : peers) departed_.push_back(peer.endpoint.name);
    }
    if (change->withdrawn || change->applied) withdrawn_ = change->withdrawn;
    departed_.insert(departed_.end(), change->left.begin(), change->left.end());
  }

  // "Nothing heard" once, after a minute of it; "heard again" once after that.
  void ReportSilence(bool heard) {
    int64_t now = MonotonicNowNs();
    if (heard) {
      if (reported_silence_) log_("analyzer: summaries from the peers arrive again");
      reported_silence_ = false;
      last_heard_ns_ = now;
      return;
    }
    if (reported_silence_ || now - last_heard_ns_ < no_peer_heard_ns_) return;
    reported_silence_ = true;
    PeerCounters counters = transport_->counters();
    log_("analyzer: no summary accepted from any of the " + std::to_string(transport_->peer_table().entries().size()) +
         " peers for " + SecondsText(now - last_heard_ns_) + " s (datagrams received " +
         std::to_string(counters.received) + ", rejected " + std::to_string(counters.TotalRejected()) +
         "); this server compares itself with nobody: check that the peers run with LIMPWATCH_ANALYZE=1, the "
         "peer list, the firewall and the key");
  }

  std::unique_ptr<PeerTransport> transport_;
  std::unique_ptr<PeerMembership> membership_;  // null: the peers never change
  std::vector<std::string> departed_;
  bool withdrawn_ = false;  // taken out of the configuration (peer_membership.h)
  std::function<void(const std::string&)> log_;
  std::string last_logged_rejection_;
  int64_t no_peer_heard_ns_;
  int64_t last_heard_ns_;
  bool reported_silence_ = false;
};

}  // namespace

PeerSummary WireRoundTrip(const PeerSummary& summary) {
  std::vector<uint8_t> bytes;
  if (EncodeSummary(summary, nullptr, &bytes) != EncodeError::kNone) return summary;
  DecodeResult decoded = DecodeSummary(bytes, nullptr);
  return decoded.ok() ? decoded.decoded.summary : summary;
}

std::unique_ptr<SummaryExchange> MakeTransportExchange(std::unique_ptr<PeerTransport> transport,
                                                       std::function<void(const std::string&)> log,
                                                       std::chrono::nanoseconds no_peer_heard) {
  return std::make_unique<TransportExchange>(std::move(transport), nullptr, std::move(log), no_peer_heard);
}

std::unique_ptr<SummaryExchange> MakeTransportExchange(std::unique_ptr<PeerTransport> transport,
                                                       std::unique_ptr<PeerMembership> membership,
                                                       std::function<void(const std::string&)> log,
                                                       std::chrono::nanoseconds no_peer_heard) {
  return std::make_unique<TransportExchange>(std::move(transport), std::move(membership), std::move(log),
                                             no_peer_heard);
}

std::unique_ptr<SummaryExchange> MakeExchangeFromEnvironment(std::function<void(const std::string&)> log,
                                                             std::vector<std::string>* problems) {
  auto membership = std::make_unique<PeerMembership>(PeerMembership::Load(PeerConfigSources::FromEnvironment()));
  problems->insert(problems->end(), membership->config().errors.begin(), membership->config().errors.end());
  auto transport = PeerTransport::CreateFromConfig(membership->config(), problems);
  if (!transport) return nullptr;
  return MakeTransportExchange(std::move(transport), std::move(membership), std::move(log));
}

}  // namespace limpwatch::analyzer
