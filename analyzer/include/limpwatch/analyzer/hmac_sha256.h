// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), written here so the
// analyzer authenticates peer summaries without linking a crypto library
// into every file server. Checked against the FIPS 180-2 and RFC 4231
// vectors in tests/hmac_sha256_test.cc.
//
// Not hardened against side channels beyond the constant-time tag
// comparison: the key never leaves the process and the message is public.
#ifndef LIMPWATCH_ANALYZER_HMAC_SHA256_H_
#define LIMPWATCH_ANALYZER_HMAC_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace limpwatch::analyzer {

// Incremental SHA-256. Copyable: copying a state mid-stream forks the hash.
class Sha256 {
 public:
  static constexpr size_t kDigestBytes = 32;
  static constexpr size_t kBlockBytes = 64;
  using Digest = std::array<uint8_t, kDigestBytes>;

  Sha256();

  void Update(std::span<const uint8_t> bytes);
  // The digest of everything passed to Update. The object is spent after it.
  Digest Finish();

  static Digest Hash(std::span<const uint8_t> bytes);

 private:
  void Compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, kBlockBytes> pending_{};
  size_t pending_bytes_ = 0;
  uint64_t total_bytes_ = 0;
};

// HMAC-SHA256 with a fixed key. The key's inner and outer pads are absorbed
// once here, so each message costs two SHA-256 runs over the message and one
// block, not four. Compute is const and may be called from several threads.
// The destructor wipes the derived states (they are as good as the key).
class HmacSha256 {
 public:
  explicit HmacSha256(std::span<const uint8_t> key);
  ~HmacSha256();
  HmacSha256(const HmacSha256&) = default;
  HmacSha256& operator=(const HmacSha256&) = default;

  Sha256::Digest Compute(std::span<const uint8_t> message) const;

 private:
  Sha256 inner_;  // after key ^ ipad
  Sha256 outer_;  // after key ^ opad
};

// Compares two byte strings in time that depends only on their lengths, so a
// forger learns nothing from how fast a wrong tag is refused.
bool EqualInConstantTime(std::span<const uint8_t> a, std::span<const uint8_t> b);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_HMAC_SHA256_H_
