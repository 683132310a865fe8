// The peer list: LIMPWATCH_PEERS, an fs.conf <Aliases> section, which entry
// is this server, and one error line per bad entry with the good ones kept.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "limpwatch/analyzer/peer_config.h"
#include "peer/temp_dir.h"

namespace limpwatch::analyzer {
namespace {

using testing::TempDir;

bool AnyErrorContains(const std::vector<std::string>& errors, const std::string& text) {
  for (const auto& error : errors) {
    if (error.find(text) != std::string::npos) return true;
  }
  return false;
}

void ExpectOneLineEach(const std::vector<std::string>& errors) {
  for (const auto& error : errors) EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(PeerList, Ipv4Ipv6NamesAndHostNames) {
  std::vector<std::string> errors;
  auto peers = ParsePeerList(" 127.0.0.1:4334, [::1]:4335 ,alpha=127.0.0.2:4336,localhost:4337,", &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(peers.size(), 4u);
  EXPECT_EQ(peers[0].address.ToString(), "127.0.0.1:4334");
  EXPECT_EQ(peers[0].name, "127.0.0.1:4334");
  EXPECT_EQ(peers[1].address.ToString(), "[::1]:4335");
  EXPECT_TRUE(peers[1].address.is_ipv6());
  EXPECT_EQ(peers[2].name, "alpha");
  EXPECT_EQ(peers[2].address.ToString(), "127.0.0.2:4336");
  EXPECT_EQ(peers[3].host, "localhost");
  EXPECT_EQ(peers[3].origin, "LIMPWATCH_PEERS entry 4");
  EXPECT_TRUE(peers[0].resolved);  // numeric: at once
  EXPECT_FALSE(peers[3].resolved);  // a host name: when needed
  ASSERT_TRUE(ResolvePeer(&peers[3], &errors));
  EXPECT_TRUE(peers[3].resolved);
  EXPECT_EQ(peers[3].address.port(), 4337);
}

// In a cluster larger than one group, a server looks up the host names of
// its group and its own only.
TEST(PeerList, OnlyThisServersGroupIsLookedUp) {
  PeerConfigSources sources;
  for (int index = 0; index < 70; ++index) {
    sources.peers += "s" + std::to_string(index) + "=localhost:" + std::to_string(5000 + index) + ",";
  }
  sources.self = "s3";
  sources.group_size = "8";
  PeerConfig config = LoadPeerConfig(sources);
  ASSERT_TRUE(config.errors.empty()) << config.errors.front();
  ASSERT_EQ(config.servers.size(), 70u);
  size_t resolved = 0;
  for (const PeerEndpoint& server : config.servers) resolved += server.resolved;
  EXPECT_EQ(resolved, 9u);
  EXPECT_TRUE(config.servers[3].resolved);
  ASSERT_EQ(config.Peers().size(), 8u);
  for (const PeerEndpoint& peer : config.Peers()) EXPECT_NE(peer.address.port(), 0) << peer.name;
  ASSERT_TRUE(config.BindAddress());
  EXPECT_EQ(config.BindAddress()->port(), 5003);
}

TEST(PeerList, MalformedEntriesAreReportedAndTheGoodOnesKept) {
  std::vector<std::string> errors;
  auto peers = ParsePeerList(
      "127.0.0.1:4334,127.0.0.1,127.0.0.1:99999,127.0.0.1:0,::1:4334,[::1:4334,=127.0.0.1:1,127.0.0.1:x,[::1]:4335",
      &errors);
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0].address.ToString(), "127.0.0.1:4334");
  EXPECT_EQ(peers[1].address.ToString(), "[::1]:4335");
  ASSERT_EQ(errors.size(), 7u);
  ExpectOneLineEach(errors);
  EXPECT_NE(errors[0].find("LIMPWATCH_PEERS entry 2"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("no ':port'"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("bad port '99999'"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("port 0"), std::string::npos) << errors[2];
  EXPECT_NE(errors[3].find("without brackets"), std::string::npos) << errors[3];
  EXPECT_NE(errors[4].find("unclosed"), std::string::npos) << errors[4];
  EXPECT_NE(errors[5].find("empty name"), std::string::npos) << errors[5];
  EXPECT_NE(errors[6].find("LIMPWATCH_PEERS entry 8"), std::string::npos) << errors[6];
}

constexpr char kFsConf[] = R"(<Defaults>
	UnexpectedRequests 50
	LogFile /tmp/pvfs2-server.log
</Defaults>

# The servers, as pvfs2-genconfig writes them.
<Aliases>
	Alias server1 tcp://127.0.0.1:3334
	Alias server2 tcp://127.0.0.2:3334   # a comment after an entry
	alias server3 ib://ib-node3:3335,tcp://127.0.0.3:3336
	Alias server4 tcp://[::1]:3337
</Aliases>

<FileSystem>
	Name pvfs2-fs
	ID 1234
</FileSystem>
)";

TEST(PvfsAliases, ReadsTheAliasesWithThePortOffset) {
  TempDir dir;
  std::string path = dir.Write("fs.conf", kFsConf, 0644);
  std::vector<std::string> errors;
  auto servers = ParsePvfsAliases(path, PvfsPortRule{}, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(servers.size(), 4u);
  EXPECT_EQ(servers[0].name, "server1");
  EXPECT_EQ(servers[0].address.ToString(), "127.0.0.1:4334");
  EXPECT_EQ(servers[0].origin, path + ":8");
  EXPECT_EQ(servers[1].address.ToString(), "127.0.0.2:4334");
  EXPECT_EQ(servers[2].address.ToString(), "127.0.0.3:4336");  // the tcp:// address, not ib://
  EXPECT_EQ(servers[3].address.ToString(), "[::1]:4337");
}

TEST(PvfsAliases, HandleRangesGiveTheServersKinds) {
  // Two file systems: a server that holds metadata only in both, one that
  // holds data only, and one that holds both (no kind of its own).
  const char* conf = R"(<Aliases>
    Alias meta1 tcp://127.0.0.1:3334
    Alias io1 tcp://127.0.0.1:3335
    Alias both1 tcp://127.0.0.1:3336
</Aliases>
<FileSystem>
    Name one
    <MetaHandleRanges>
        Range meta1 3-1000
        Range both1 1001-2000
    </MetaHandleRanges>
    <DataHandleRanges>
        Range io1 2001-3000
        Range both1 3001-4000
    </DataHandleRanges>
</FileSystem>
<FileSystem>
    Name two
    <MetaHandleRanges>
        Range meta1 5000-6000
    </MetaHandleRanges>
    <DataHandleRanges>
        Range io1 6001-7000
    </DataHandleRanges>
</FileSystem>
)";
  TempDir dir;
  std::vector<std::string> errors;
  auto servers = ParsePvfsAliases(dir.Write("fs.conf", conf, 0644), PvfsPortRule{}, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(servers.size(), 3u);
  EXPECT_EQ(servers[0].kind, "metadata");
  EXPECT_EQ(servers[1].kind, "data");
  EXPECT_EQ(servers[2].kind, "");
}

TEST(PeerList, AKindAfterTheNameAndAnEmptyOneRefused) {
  std::vector<std::string> errors;
  auto peers = ParsePeerList("m0@meta=127.0.0.1:9,s1=127.0.0.1:10,bad@=127.0.0.1:11", &errors);
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0].name, "m0");
  EXPECT_EQ(peers[0].kind, "meta");
  EXPECT_EQ(peers[1].kind, "");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(AnyErrorContains(errors, "entry 3 'bad@=127.0.0.1:11': empty kind after '@'")) << errors[0];
}

TEST(PvfsAliases, OffsetAndPerAliasPorts) {
  TempDir dir;
  std::string path = dir.Write("fs.conf", kFsConf, 0644);
  std::vector<std::string> errors;
  PvfsPortRule rule;
  rule.offset = 0;  // UDP and TCP ports never collide
  rule.alias_ports = {{"server2", 9000}};
  auto servers = ParsePvfsAliases(path, rule, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(servers.size(), 4u);
  EXPECT_EQ(servers[0].port, 3334);
  EXPECT_EQ(servers[1].port, 9000);
}

TEST(PvfsAliases, MalformedLinesNameTheFileAndLineAndTheGoodAliasesAreKept) {
  TempDir dir;
  std::string path = dir.Write("fs.conf", R"(Alias early tcp://127.0.0.1:1
<Aliases>
	Alias good1 tcp://127.0.0.1:3334
	Alias missing-address
	Alias ib-only ib://node:3335
	Alias bad-port tcp://127.0.0.1:70000
	Alias overflow tcp://127.0.0.1:65000
	Alias good1 tcp://127.0.0.9:3334
	Alias extra tcp://127.0.0.1:3334 4334
	Something else
	Alias good2 tcp://127.0.0.2:3334
	<Aliases>
</Aliases>
</Aliases>
<Aliases>
	Alias good3 tcp://127.0.0.3:3334
)", 0644);
  std::vector<std::string> errors;
  auto servers = ParsePvfsAliases(path, PvfsPortRule{}, &errors);
  ASSERT_EQ(servers.size(), 3u);
  EXPECT_EQ(servers[0].name, "good1");
  EXPECT_EQ(servers[0].address.ToString(), "127.0.0.1:4334");
  EXPECT_EQ(servers[1].name, "good2");
  EXPECT_EQ(servers[2].name, "good3");
  ExpectOneLineEach(errors);
  EXPECT_TRUE(AnyErrorContains(errors, path + ":1: Alias outside <Aliases>"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":4: expected 'Alias <name> tcp://<host>:<port>'"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":5: alias 'ib-only' has no tcp:// address"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":6: alias 'bad-port': bad port '70000'"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":7: alias 'overflow': BMI port 65000 + offset 1000"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":8: alias 'good1' is listed twice"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":9: expected 'Alias"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":10: expected 'Alias <name> tcp://<host>:<port>', found 'Something else'"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":12: nested <Aliases>"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":14: </Aliases> without <Aliases>"));
  EXPECT_TRUE(AnyErrorContains(errors, path + ":16: <Aliases> is not closed"));
  EXPECT_EQ(errors.size(), 11u);
}

TEST(PvfsAliases, MissingFileOrSectionIsReported) {
  TempDir dir;
  std::vector<std::string> errors;
  EXPECT_TRUE(ParsePvfsAliases(dir.path() + "/none.conf", PvfsPortRule{}, &errors).empty());
  EXPECT_TRUE(AnyErrorContains(errors, dir.path() + "/none.conf: cannot open"));
  errors.clear();
  std::string path = dir.Write("empty.conf", "<Defaults>\n</Defaults>\n", 0644);
  EXPECT_TRUE(ParsePvfsAliases(path, PvfsPortRule{}, &errors).empty());
  EXPECT_TRUE(AnyErrorContains(errors, path + ": no <Aliases> section"));
}

TEST(PeerConfig, SelfFromLimpwatchSelfOrLimpwatchName) {
  TempDir dir;
  PeerConfigSources sources;
  sources.pvfs_config = dir.Write("fs.conf", kFsConf, 0644);
  sources.self = "server2";
  PeerConfig config = LoadPeerConfig(sources);
  EXPECT_TRUE(config.errors.empty()) << config.errors.front();
  ASSERT_TRUE(config.self);
  EXPECT_EQ(config.servers[*config.self].name, "server2");
  ASSERT_TRUE(config.BindAddress());
  EXPECT_EQ(config.BindAddress()->ToString(), "127.0.0.2:4334");
  auto peers = config.Peers();
  ASSERT_EQ(peers.size(), 3u);
  for (const auto& peer : peers) EXPECT_NE(peer.name, "server2");

  sources.self.clear();
  sources.node_name = "server3";
  config = LoadPeerConfig(sources);
  ASSERT_TRUE(config.self);
  EXPECT_EQ(config.servers[*config.self].name, "server3");
}

TEST(PeerConfig, SelfByHostPortInThePeerListAndBindOverride) {
  PeerConfigSources sources;
  sources.peers = "127.0.0.1:5001,127.0.0.1:5002";
  sources.self = "127.0.0.1:5002";
  sources.bind = "0.0.0.0:5002";
  PeerConfig config = LoadPeerConfig(sources);
  EXPECT_TRUE(config.errors.empty()) << config.errors.front();
  ASSERT_TRUE(config.self);
  EXPECT_EQ(*config.self, 1u);
  EXPECT_EQ(config.BindAddress()->ToString(), "0.0.0.0:5002");
  ASSERT_EQ(config.Peers().size(), 1u);
  EXPECT_EQ(config.Peers()[0].port, 5001);
}

TEST(PeerConfig, ProblemsAreReportedInOneLineEach) {
  TempDir dir;
  PeerConfigSources sources;
  sources.pvfs_config = dir.Write("fs.conf", kFsConf, 0644);
  sources.self = "server9";
  sources.port_offset = "lots";
  sources.alias_ports = "server1=4000,server7=5000,junk";
  sources.bind = "not-an-address";
  PeerConfig config = LoadPeerConfig(sources);
  ExpectOneLineEach(config.errors);
  EXPECT_FALSE(config.self);
  EXPECT_EQ(config.servers.size(), 4u);
  EXPECT_EQ(config.servers[0].port, 4000);  // the good per-alias port still applies
  EXPECT_EQ(config.servers[1].port, 4334);  // the default offset replaced the bad one
  EXPECT_TRUE(AnyErrorContains(config.errors, "LIMPWATCH_SELF='server9' names none of the 4"));
  EXPECT_TRUE(AnyErrorContains(config.errors, "LIMPWATCH_PEER_PORT_OFFSET='lots'"));
  EXPECT_TRUE(AnyErrorContains(config.errors, "LIMPWATCH_PEER_PORTS entry 3 'junk'"));
  EXPECT_TRUE(AnyErrorContains(config.errors, "'server7' is not an alias of " + sources.pvfs_config));
  EXPECT_TRUE(AnyErrorContains(config.errors, "LIMPWATCH_PEER_BIND='not-an-address'"));

  PeerConfigSources both;
  both.peers = "127.0.0.1:1";
  both.pvfs_config = sources.pvfs_config;
  config = LoadPeerConfig(both);
  EXPECT_TRUE(AnyErrorContains(config.errors, "LIMPWATCH_PVFS_CONFIG='" + sources.pvfs_config + "' is ignored"));
  EXPECT_TRUE(AnyErrorContains(config.errors, "set LIMPWATCH_SELF"));
}

TEST(PeerConfig, FromTheEnvironment) {
  setenv("LIMPWATCH_PEERS", "a=127.0.0.1:6001,b=127.0.0.1:6002", 1);
  setenv("LIMPWATCH_NAME", "b", 1);
  unsetenv("LIMPWATCH_SELF");
  unsetenv("LIMPWATCH_PVFS_CONFIG");
  unsetenv("LIMPWATCH_PEER_BIND");
  PeerConfig config = LoadPeerConfig(PeerConfigSources::FromEnvironment());
  unsetenv("LIMPWATCH_PEERS");
  unsetenv("LIMPWATCH_NAME");
  EXPECT_TRUE(config.errors.empty()) << config.errors.front();
  ASSERT_TRUE(config.self);
  EXPECT_EQ(config.servers[*config.self].name, "b");
  EXPECT_EQ(config.BindAddress()->ToString(), "127.0.0.1:6002");
}

}  // namespace
}  // namespace limpwatch::analyzer
