// The key the fuzz target and its seed corpus share, so seeded tagged
// datagrams verify and the target can re-sign mutated ones.
#ifndef LIMPWATCH_TESTS_FUZZ_FUZZ_KEY_H_
#define LIMPWATCH_TESTS_FUZZ_FUZZ_KEY_H_

#include <string>
#include <vector>

#include "limpwatch/analyzer/peer_key.h"

namespace limpwatch::analyzer::fuzzing {

inline const PeerKey& FuzzKey() {
  static const PeerKey key = [] {
    const std::string secret = "limpwatch peer wire fuzz key";
    std::string error;
    return *PeerKey::FromBytes(std::vector<uint8_t>(secret.begin(), secret.end()), &error);
  }();
  return key;
}

}  // namespace limpwatch::analyzer::fuzzing

#endif  // LIMPWATCH_TESTS_FUZZ_FUZZ_KEY_H_
