#include "limpwatch/analyzer/transport_exchange.h"

#include <chrono>

namespace limpwatch::analyzer {
namespace {

class TransportExchange : public SummaryExchange {
 public:
  TransportExchange(std::unique_ptr<PeerTransport> transport, std::function<void(const std::string&)> log)
      : transport_(std::move(transport)), log_(std::move(log)) {}

  void Send(const PeerSummary& summary) override {
    SendReport report = transport_->Send(summary);
    if (report.encode_error != EncodeError::kNone) {
      log_(std::string("analyzer: summary of window ") + std::to_string(summary.window) +
           " not sent: " + EncodeErrorMessage(report.encode_error));
    }
  }

  std::vector<PeerSummary> Receive() override {
    std::vector<PeerSummary> summaries;
    for (ReceivedSummary& received : transport_->Poll(std::chrono::nanoseconds(0))) {
      summaries.push_back(std::move(received.summary));
    }
    std::string rejection = transport_->last_rejection();
    if (!rejection.empty() && rejection != last_logged_rejection_) {
      log_("analyzer: peer datagram rejected: " + rejection);
      last_logged_rejection_ = rejection;
    }
    return summaries;
  }

  PeerSummary AsReceived(const PeerSummary& summary) const override { return WireRoundTrip(summary); }

 private:
  std::unique_ptr<PeerTransport> transport_;
  std::function<void(const std::string&)> log_;
  std::string last_logged_rejection_;
};

}  // namespace

PeerSummary WireRoundTrip(const PeerSummary& summary) {
  std::vector<uint8_t> bytes;
  if (EncodeSummary(summary, nullptr, &bytes) != EncodeError::kNone) return summary;
  DecodeResult decoded = DecodeSummary(bytes, nullptr);
  return decoded.ok() ? decoded.decoded.summary : summary;
}

std::unique_ptr<SummaryExchange> MakeTransportExchange(std::unique_ptr<PeerTransport> transport,
                                                       std::function<void(const std::string&)> log) {
  return std::make_unique<TransportExchange>(std::move(transport), std::move(log));
}

}  // namespace limpwatch::analyzer
