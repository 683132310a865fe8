// One simulated server's analyzer, doing what AnalyzerLoop does with its
// peers' datagrams: decode and authenticate each (the real wire), hear its
// verdict list, hand it to the real ClusterDiagnoser with the server's own
// summary as a peer would read it, and compare every window once a newer one
// is there; its verdict board says what its next summary carries.
#ifndef LIMPWATCH_TOOLS_BENCH_SCALE_SIMULATED_ANALYZER_H_
#define LIMPWATCH_TOOLS_BENCH_SCALE_SIMULATED_ANALYZER_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/cluster_diagnoser.h"
#include "limpwatch/analyzer/peer_key.h"
#include "limpwatch/analyzer/verdict_board.h"

namespace limpwatch::scale {

struct AnalyzerCounts {
  uint64_t datagrams_in = 0;
  uint64_t bytes_in = 0;
  uint64_t rejected = 0;  // datagrams that did not decode
  uint64_t windows = 0;   // windows compared
};

class SimulatedAnalyzer {
 public:
  SimulatedAnalyzer(const std::string& name, const analyzer::AnalyzerConfig& config,
                    const analyzer::ResourceManifest& manifest, const analyzer::NameBook* names,
                    const analyzer::PeerKey* key);

  // A peer's datagram, as the transport would hand it over.
  void Receive(std::span<const uint8_t> datagram);
  // The server's own summary of `window` (its own datagram, read back):
  // windows before it are complete and are compared.
  std::vector<analyzer::Alarm> Produce(std::span<const uint8_t> own_datagram, uint64_t window);

  // A peer that left this server's group (peer_membership.h): forgotten.
  void Forget(const std::string& peer);

  std::vector<analyzer::OpenVerdict> OwnVerdicts() const { return verdicts_.OwnVerdicts(); }
  const AnalyzerCounts& counts() const { return counts_; }

 private:
  analyzer::AnalyzerConfig config_;
  const analyzer::PeerKey* key_;
  std::string name_;
  analyzer::ClusterDiagnoser diagnoser_;
  analyzer::VerdictBoard verdicts_;
  AnalyzerCounts counts_;
};

}  // namespace limpwatch::scale

#endif  // LIMPWATCH_TOOLS_BENCH_SCALE_SIMULATED_ANALYZER_H_
