// SHA-256 against FIPS 180-2 appendix B and HMAC-SHA256 against RFC 4231.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "limpwatch/analyzer/hmac_sha256.h"

namespace limpwatch::analyzer {
namespace {

std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::vector<uint8_t> Repeat(uint8_t byte, size_t count) { return std::vector<uint8_t>(count, byte); }

std::string Hex(std::span<const uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (uint8_t byte : bytes) {
    text += kDigits[byte >> 4];
    text += kDigits[byte & 15];
  }
  return text;
}

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(Hex(Sha256::Hash(Bytes(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex(Sha256::Hash(Bytes("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256::Hash(Bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hex(Sha256::Hash(Bytes("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqk"
                                   "lmnopqrlmnopqrsmnopqrstnopqrstu"))),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionAFedInUnevenPieces) {
  std::vector<uint8_t> block = Repeat('a', 1000);
  Sha256 sha;
  size_t fed = 0;
  for (size_t piece = 1; fed < 1'000'000; piece = piece % 997 + 1) {
    size_t take = std::min(piece, 1'000'000 - fed);
    sha.Update(std::span(block).first(std::min(take, block.size())));
    fed += std::min(take, block.size());
  }
  EXPECT_EQ(Hex(sha.Finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, EverySplitPointGivesTheOneShotDigest) {
  std::vector<uint8_t> message;
  for (int i = 0; i < 200; ++i) message.push_back(static_cast<uint8_t>(i * 7 + 3));
  Sha256::Digest whole = Sha256::Hash(message);
  for (size_t split = 0; split <= message.size(); ++split) {
    Sha256 sha;
    sha.Update(std::span(message).first(split));
    sha.Update(std::span(message).subspan(split));
    EXPECT_EQ(sha.Finish(), whole) << "split at " << split;
  }
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes straddle the length field's block boundary.
  EXPECT_EQ(Hex(Sha256::Hash(Repeat('a', 55))), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(Hex(Sha256::Hash(Repeat('a', 56))), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(Hex(Sha256::Hash(Repeat('a', 64))), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

struct HmacVector {
  std::vector<uint8_t> key;
  std::vector<uint8_t> data;
  std::string mac;  // hex, possibly truncated
};

TEST(HmacSha256, Rfc4231Vectors) {
  std::vector<uint8_t> key4;
  for (uint8_t i = 1; i <= 25; ++i) key4.push_back(i);
  const std::vector<HmacVector> vectors = {
      {Repeat(0x0b, 20), Bytes("Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {Bytes("Jefe"), Bytes("what do ya want for nothing?"),
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {Repeat(0xaa, 20), Repeat(0xdd, 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {key4, Repeat(0xcd, 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {Repeat(0x0c, 20), Bytes("Test With Truncation"), "a3b6167473100ee06e0c796c2955552b"},
      {Repeat(0xaa, 131), Bytes("Test Using Larger Than Block-Size Key - Hash Key First"),
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {Repeat(0xaa, 131),
       Bytes("This is a test using a larger than block-size key and a larger than block-size data. The key needs "
             "to be hashed before being used by the HMAC algorithm."),
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (size_t i = 0; i < vectors.size(); ++i) {
    HmacSha256 hmac(vectors[i].key);
    Sha256::Digest mac = hmac.Compute(vectors[i].data);
    EXPECT_EQ(Hex(std::span(mac).first(vectors[i].mac.size() / 2)), vectors[i].mac) << "RFC 4231 test case " << i + 1;
    // The keyed object is reusable: a second message gives the same answer.
    EXPECT_EQ(hmac.Compute(vectors[i].data), mac);
  }
}

TEST(HmacSha256, KeyOfExactlyOneBlockIsNotHashed) {
  // 64 bytes is used as is; 65 is hashed first: the two must differ.
  std::vector<uint8_t> data = Bytes("message");
  EXPECT_NE(HmacSha256(Repeat(0x11, 64)).Compute(data), HmacSha256(Repeat(0x11, 65)).Compute(data));
  // A key hashed first equals the HMAC keyed by its digest.
  Sha256::Digest digest = Sha256::Hash(Repeat(0x11, 65));
  EXPECT_EQ(HmacSha256(Repeat(0x11, 65)).Compute(data), HmacSha256(digest).Compute(data));
}

TEST(EqualInConstantTime, ComparesContentAndLength) {
  std::vector<uint8_t> a = Bytes("0123456789abcdef");
  std::vector<uint8_t> b = a;
  EXPECT_TRUE(EqualInConstantTime(a, b));
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] ^= 0x80;
    EXPECT_FALSE(EqualInConstantTime(a, b)) << i;
    b[i] ^= 0x80;
  }
  EXPECT_FALSE(EqualInConstantTime(a, std::span(b).first(15)));
}

}  // namespace
}  // namespace limpwatch::analyzer
