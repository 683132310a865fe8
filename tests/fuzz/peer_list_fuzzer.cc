// Fuzz target for the peer list (LIMPWATCH_PEERS, ParsePeerList in
// analyzer/peer_config.h). Host names are looked up in /etc/hosts only
// (fuzz_support.h).
//
// Invariants, for every input:
//   - every non-empty entry becomes one peer or one error line naming it;
//   - a peer has a host, a port other than 0, and the name its entry gives
//     (the text before '=', else the address) and its kind (after an '@' in
//     that text, never empty; else none);
//   - it is resolved when its host is numeric; resolved (ResolvePeer) or
//     not, it has an address with its port, or one error line naming its
//     entry;
//   - its address prints as text that parses back to the same address.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "host_port.h"
#include "limpwatch/analyzer/peer_config.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

void Check(bool condition, const char* invariant) { Require(condition, "peer list", invariant); }

// The entries as the list is split: by commas, trimmed, numbered from 1;
// empty ones stay (numbered) but count for nothing.
std::vector<std::string_view> Entries(std::string_view text) {
  std::vector<std::string_view> entries;
  while (true) {
    size_t comma = text.find(',');
    entries.push_back(TrimWhitespace(text.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return entries;
}

constexpr std::string_view kOriginPrefix = "LIMPWATCH_PEERS entry ";

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer;
  using namespace limpwatch::analyzer::fuzzing;
  limpwatch::fuzzing::ResolveNamesFromHostsFileOnly();
  const std::string text = limpwatch::fuzzing::Text(std::span(data, size));
  std::vector<std::string> errors;
  std::vector<PeerEndpoint> peers = ParsePeerList(text, &errors);

  std::vector<std::string_view> entries = text.empty() ? std::vector<std::string_view>{} : Entries(text);
  size_t non_empty = 0;
  for (std::string_view entry : entries) non_empty += !entry.empty();
  Check(peers.size() + errors.size() == non_empty, "each non-empty entry is one peer or one error");
  for (const std::string& error : errors) {
    Check(error.compare(0, kOriginPrefix.size(), kOriginPrefix) == 0, "an error names its entry");
  }
  for (PeerEndpoint& peer : peers) {
    Check(!peer.host.empty() && peer.port != 0, "a peer has a host and a port other than 0");
    Check(peer.resolved || !PeerAddress::FromNumericHost(peer.host, peer.port), "a numeric host is resolved at once");
    std::vector<std::string> lookup_errors;
    bool resolved = ResolvePeer(&peer, &lookup_errors);
    Check(resolved == lookup_errors.empty() && lookup_errors.size() <= 1, "a lookup resolves or gives one error");
    if (!resolved) {
      Check(lookup_errors[0].compare(0, peer.origin.size(), peer.origin) == 0, "which names its entry");
      continue;
    }
    Check(peer.address.port() == peer.port, "its address has its port");
    Check(peer.origin.compare(0, kOriginPrefix.size(), kOriginPrefix) == 0, "its origin names its entry");
    size_t number = std::stoul(peer.origin.substr(kOriginPrefix.size()));
    Check(number >= 1 && number <= entries.size(), "the entry it names exists");
    std::string_view entry = entries[number - 1];
    size_t equals = entry.find('=');
    std::string_view expected_name =
        equals == std::string_view::npos ? entry : TrimWhitespace(entry.substr(0, equals));
    std::string_view expected_kind;
    if (size_t at = expected_name.find('@'); equals != std::string_view::npos && at != std::string_view::npos) {
      expected_kind = TrimWhitespace(expected_name.substr(at + 1));
      expected_name = TrimWhitespace(expected_name.substr(0, at));
      Check(!expected_kind.empty(), "a kind after '@' is never empty");
    }
    Check(peer.name == expected_name, "a peer is named by its entry");
    Check(peer.kind == expected_kind, "and has the kind its entry gives");
    auto printed = PeerAddress::ParseNumeric(peer.address.ToString());
    Check(printed.has_value(), "a peer's address prints as a numeric address");
    Check(printed->ToString() == peer.address.ToString(), "which parses back to the same address");
  }
  return 0;
}
