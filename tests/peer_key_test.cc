// The key file: permissions, size, trailing newline, environment.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "limpwatch/analyzer/peer_key.h"
#include "peer/temp_dir.h"

namespace limpwatch::analyzer {
namespace {

using testing::TempDir;

const std::string kSecret = "0123456789abcdef0123456789abcdef";

std::vector<uint8_t> Message() { return {'w', 'i', 'n', 'd', 'o', 'w'}; }

Sha256::Digest TagOf(const PeerKey& key) { return key.hmac().Compute(Message()); }

Sha256::Digest TagOfBytes(const std::string& bytes) {
  return HmacSha256(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())).Compute(Message());
}

TEST(PeerKey, OwnerOnlyFileIsLoadedAndItsTrailingNewlineDropped) {
  TempDir dir;
  std::string error;
  auto plain = LoadPeerKeyFile(dir.Write("plain", kSecret), &error);
  ASSERT_TRUE(plain) << error;
  auto newline = LoadPeerKeyFile(dir.Write("newline", kSecret + "\n"), &error);
  ASSERT_TRUE(newline) << error;
  auto crlf = LoadPeerKeyFile(dir.Write("crlf", kSecret + "\r\n", 0400), &error);
  ASSERT_TRUE(crlf) << error;
  EXPECT_EQ(TagOf(*plain), TagOfBytes(kSecret));
  EXPECT_EQ(TagOf(*newline), TagOfBytes(kSecret));
  EXPECT_EQ(TagOf(*crlf), TagOfBytes(kSecret));
  // Only one newline is dropped: a key may end in one.
  auto two = LoadPeerKeyFile(dir.Write("two", kSecret + "\n\n"), &error);
  ASSERT_TRUE(two) << error;
  EXPECT_EQ(TagOf(*two), TagOfBytes(kSecret + "\n"));
}

TEST(PeerKey, FileAccessibleByGroupOrOthersIsRefusedInOneLine) {
  TempDir dir;
  for (mode_t mode : {0640, 0604, 0660, 0644, 0620, 0602, 0610, 0601}) {
    std::string error;
    std::string path = dir.Write("key", kSecret, mode);
    EXPECT_FALSE(LoadPeerKeyFile(path, &error)) << std::oct << mode;
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find("group or others"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST(PeerKey, WrongSizesMissingFilesAndDirectoriesAreRefused) {
  TempDir dir;
  std::string error;
  EXPECT_FALSE(LoadPeerKeyFile(dir.Write("short", "0123456789abcde\n"), &error));  // 15 bytes
  EXPECT_NE(error.find("15 bytes"), std::string::npos) << error;
  EXPECT_TRUE(LoadPeerKeyFile(dir.Write("sixteen", "0123456789abcdef"), &error)) << error;
  EXPECT_FALSE(LoadPeerKeyFile(dir.Write("huge", std::string(5000, 'k')), &error));
  EXPECT_NE(error.find("more than 4096 bytes"), std::string::npos) << error;
  EXPECT_FALSE(LoadPeerKeyFile(dir.Write("just-over", std::string(4097, 'k')), &error));
  EXPECT_TRUE(LoadPeerKeyFile(dir.Write("largest", std::string(4096, 'k') + "\r\n"), &error)) << error;
  EXPECT_FALSE(LoadPeerKeyFile(dir.path() + "/missing", &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_FALSE(LoadPeerKeyFile(dir.path(), &error));
  EXPECT_NE(error.find("not a regular file"), std::string::npos) << error;
}

TEST(PeerKey, EnvironmentUnsetMeansNoKeyAndNoError) {
  unsetenv(kPeerKeyFileVariable);
  std::string error = "stale";
  EXPECT_FALSE(LoadPeerKeyFromEnvironment(&error));
  EXPECT_TRUE(error.empty());
}

TEST(PeerKey, EnvironmentNamesTheFile) {
  TempDir dir;
  std::string error;
  setenv(kPeerKeyFileVariable, dir.Write("key", kSecret).c_str(), 1);
  auto key = LoadPeerKeyFromEnvironment(&error);
  ASSERT_TRUE(key) << error;
  EXPECT_EQ(TagOf(*key), TagOfBytes(kSecret));

  setenv(kPeerKeyFileVariable, dir.Write("open", kSecret, 0644).c_str(), 1);
  EXPECT_FALSE(LoadPeerKeyFromEnvironment(&error));
  EXPECT_EQ(error.rfind(kPeerKeyFileVariable, 0), 0u) << error;
  unsetenv(kPeerKeyFileVariable);
}

}  // namespace
}  // namespace limpwatch::analyzer
