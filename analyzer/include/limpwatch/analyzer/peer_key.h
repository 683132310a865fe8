// The shared secret that authenticates peer summaries.
//
// Every server of a cluster reads the same key file, named by
// LIMPWATCH_PEER_KEY_FILE. The file's bytes are the key (one trailing "\n"
// or "\r\n" is dropped, so `head -c 32 /dev/urandom | base64 > key` works);
// it must hold 16 to 4096 bytes, be a regular file and give no permission
// at all to group or others (chmod 600): a key anyone on the host can read
// authenticates nothing, so such a file is refused, never used.
#ifndef LIMPWATCH_ANALYZER_PEER_KEY_H_
#define LIMPWATCH_ANALYZER_PEER_KEY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "limpwatch/analyzer/hmac_sha256.h"

namespace limpwatch::analyzer {

inline constexpr char kPeerKeyFileVariable[] = "LIMPWATCH_PEER_KEY_FILE";

class PeerKey {
 public:
  static constexpr size_t kMinBytes = 16;
  static constexpr size_t kMaxBytes = 4096;

  // A key from bytes; nullopt and a one-line *error when the size is out of range.
  static std::optional<PeerKey> FromBytes(std::span<const uint8_t> bytes, std::string* error);

  const HmacSha256& hmac() const { return hmac_; }

 private:
  explicit PeerKey(std::span<const uint8_t> bytes) : hmac_(bytes) {}
  HmacSha256 hmac_;
};

// Reads a key file. nullopt and a one-line *error (naming the file) when it
// cannot be read, is not a regular file, is accessible by group or others,
// or holds a key of the wrong size.
std::optional<PeerKey> LoadPeerKeyFile(const std::string& path, std::string* error);

// The key of LIMPWATCH_PEER_KEY_FILE. nullopt with an empty *error when the
// variable is unset or empty (no authentication configured); nullopt with a
// non-empty *error when it is set but the key cannot be used.
std::optional<PeerKey> LoadPeerKeyFromEnvironment(std::string* error);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_KEY_H_
