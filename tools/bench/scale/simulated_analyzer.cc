#include "scale/simulated_analyzer.h"

#include "limpwatch/analyzer/peer_wire.h"

namespace limpwatch::scale {

SimulatedAnalyzer::SimulatedAnalyzer(const std::string& name, const analyzer::AnalyzerConfig& config,
                                     const analyzer::ResourceManifest& manifest, const analyzer::NameBook* names,
                                     const analyzer::PeerKey* key)
    : config_(config),
      key_(key),
      name_(name),
      diagnoser_(config, {}, manifest, names, name),
      verdicts_(name, analyzer::VerdictOpenWindows(config), config.peer_silence_windows) {
  diagnoser_.KeepResults(false);
}

void SimulatedAnalyzer::Receive(std::span<const uint8_t> datagram) {
  ++counts_.datagrams_in;
  counts_.bytes_in += datagram.size();
  analyzer::DecodeResult result = analyzer::DecodeSummary(datagram, key_);
  if (!result.ok()) {
    ++counts_.rejected;
    return;
  }
  verdicts_.Heard(result.decoded.summary);
  diagnoser_.Add(result.decoded.summary);
}

void SimulatedAnalyzer::Forget(const std::string& peer) {
  diagnoser_.Forget(peer);
  verdicts_.Forget(peer);
}

std::vector<analyzer::Alarm> SimulatedAnalyzer::Produce(std::span<const uint8_t> own_datagram, uint64_t window) {
  analyzer::DecodeResult own = analyzer::DecodeSummary(own_datagram, key_);
  if (own.ok()) diagnoser_.Add(own.decoded.summary);
  std::vector<analyzer::Alarm> raised;
  for (uint64_t pending : diagnoser_.PendingWindows()) {
    if (pending >= window) break;
    ++counts_.windows;
    uint64_t window_end_ms = pending * config_.shift_ticks * uint64_t(config_.tick_ms);
    std::vector<analyzer::Alarm> alarms = diagnoser_.Analyze(pending, window_end_ms);
    verdicts_.Indicted(diagnoser_.last_result().indicted, pending);
    for (analyzer::Alarm& alarm : alarms) {
      verdicts_.Opened(alarm);
      raised.push_back(std::move(alarm));
    }
  }
  return raised;
}

}  // namespace limpwatch::scale
