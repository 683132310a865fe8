#include "limpwatch/analyzer/hmac_sha256.h"

#include <string.h>  // explicit_bzero

#include <algorithm>
#include <bit>
#include <cstring>

namespace limpwatch::analyzer {

namespace {

// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of the
// cube roots of the first 64 primes.
constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// Section 5.3.3: the fractional parts of the square roots of the first 8 primes.
constexpr std::array<uint32_t, 8> kInitialState = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

uint32_t LoadBigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

void StoreBigEndian32(uint32_t value, uint8_t* p) {
  p[0] = static_cast<uint8_t>(value >> 24);
  p[1] = static_cast<uint8_t>(value >> 16);
  p[2] = static_cast<uint8_t>(value >> 8);
  p[3] = static_cast<uint8_t>(value);
}

constexpr uint8_t kInnerPad = 0x36;
constexpr uint8_t kOuterPad = 0x5c;

}  // namespace

Sha256::Sha256() : state_(kInitialState) {}

void Sha256::Compress(const uint8_t* block) {
  uint32_t schedule[64];
  for (int t = 0; t < 16; ++t) schedule[t] = LoadBigEndian32(block + 4 * t);
  for (int t = 16; t < 64; ++t) {
    uint32_t w15 = schedule[t - 15];
    uint32_t w2 = schedule[t - 2];
    uint32_t sigma0 = std::rotr(w15, 7) ^ std::rotr(w15, 18) ^ (w15 >> 3);
    uint32_t sigma1 = std::rotr(w2, 17) ^ std::rotr(w2, 19) ^ (w2 >> 10);
    schedule[t] = schedule[t - 16] + sigma0 + schedule[t - 7] + sigma1;
  }

  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t big_sigma1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    uint32_t choose = (e & f) ^ (~e & g);
    uint32_t temp1 = h + big_sigma1 + choose + kRoundConstants[t] + schedule[t];
    uint32_t big_sigma0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    uint32_t temp2 = big_sigma0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + temp1;
    d = c;
    c = b;
    b = a;
    a = temp1 + temp2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::Update(std::span<const uint8_t> bytes) {
  total_bytes_ += bytes.size();
  size_t offset = 0;
  if (pending_bytes_ > 0) {
    size_t fill = std::min(bytes.size(), kBlockBytes - pending_bytes_);
    std::memcpy(pending_.data() + pending_bytes_, bytes.data(), fill);
    pending_bytes_ += fill;
    offset = fill;
    if (pending_bytes_ < kBlockBytes) return;
    Compress(pending_.data());
    pending_bytes_ = 0;
  }
  for (; bytes.size() - offset >= kBlockBytes; offset += kBlockBytes) Compress(bytes.data() + offset);
  size_t rest = bytes.size() - offset;
  if (rest > 0) std::memcpy(pending_.data(), bytes.data() + offset, rest);
  pending_bytes_ = rest;
}

Sha256::Digest Sha256::Finish() {
  // Section 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, the bit length.
  uint64_t bit_length = total_bytes_ * 8;
  uint8_t padding[kBlockBytes * 2] = {0x80};
  size_t padding_bytes = (pending_bytes_ < 56 ? 56 : 120) - pending_bytes_;
  for (int i = 0; i < 8; ++i) padding[padding_bytes + i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  Update({padding, padding_bytes + 8});

  Digest digest;
  for (size_t i = 0; i < state_.size(); ++i) StoreBigEndian32(state_[i], digest.data() + 4 * i);
  return digest;
}

Sha256::Digest Sha256::Hash(std::span<const uint8_t> bytes) {
  Sha256 sha;
  sha.Update(bytes);
  return sha.Finish();
}

HmacSha256::HmacSha256(std::span<const uint8_t> key) {
  // RFC 2104: a key longer than a block is hashed first, then zero-padded.
  uint8_t block[Sha256::kBlockBytes] = {};
  if (key.size() > Sha256::kBlockBytes) {
    Sha256::Digest hashed = Sha256::Hash(key);
    std::memcpy(block, hashed.data(), hashed.size());
    explicit_bzero(hashed.data(), hashed.size());
  } else if (!key.empty()) {
    std::memcpy(block, key.data(), key.size());
  }
  uint8_t padded[Sha256::kBlockBytes];
  for (size_t i = 0; i < sizeof(block); ++i) padded[i] = block[i] ^ kInnerPad;
  inner_.Update(padded);
  for (size_t i = 0; i < sizeof(block); ++i) padded[i] = block[i] ^ kOuterPad;
  outer_.Update(padded);
  explicit_bzero(block, sizeof(block));
  explicit_bzero(padded, sizeof(padded));
}

HmacSha256::~HmacSha256() {
  explicit_bzero(static_cast<void*>(&inner_), sizeof(inner_));
  explicit_bzero(static_cast<void*>(&outer_), sizeof(outer_));
}

Sha256::Digest HmacSha256::Compute(std::span<const uint8_t> message) const {
  Sha256 inner = inner_;
  inner.Update(message);
  Sha256::Digest inner_digest = inner.Finish();
  Sha256 outer = outer_;
  outer.Update(inner_digest);
  return outer.Finish();
}

bool EqualInConstantTime(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  if (a.size() != b.size()) return false;
  uint8_t difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= static_cast<uint8_t>(a[i] ^ b[i]);
  return difference == 0;
}

}  // namespace limpwatch::analyzer
