// Bounded fan-out (comparison_group.h): the groups are the same whatever
// order the servers are listed in, symmetric, of the promised size,
// connected, and stable when one server joins or leaves; and the peer
// configuration sends to the group.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "limpwatch/analyzer/comparison_group.h"
#include "limpwatch/analyzer/peer_config.h"
#include "limpwatch/analyzer/peer_transport.h"
#include "limpwatch/analyzer/transport_exchange.h"

namespace limpwatch::analyzer {
namespace {

std::vector<std::string> Names(size_t count, const std::string& prefix = "pvfs-io-") {
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

// Every server's group, by name.
std::map<std::string, std::set<std::string>> Groups(const std::vector<std::string>& names, size_t size) {
  std::map<std::string, std::set<std::string>> groups;
  for (size_t self = 0; self < names.size(); ++self) {
    for (size_t index : ComparisonGroup(names, self, size)) groups[names[self]].insert(names[index]);
  }
  return groups;
}

TEST(ComparisonGroup, ASmallClusterComparesEveryServerWithEveryOther) {
  std::vector<std::string> names = Names(9);
  std::vector<size_t> group = ComparisonGroup(names, 3, 8);
  EXPECT_EQ(group, (std::vector<size_t>{0, 1, 2, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(ComparisonGroup(names, 9, 8).empty()) << "no such server";
}

TEST(ComparisonGroup, EveryServerComputesTheSameGroupsFromItsOwnListing) {
  std::vector<std::string> names = Names(500);
  auto groups = Groups(names, 16);
  std::mt19937 random(7);
  for (int listing = 0; listing < 3; ++listing) {
    std::vector<std::string> shuffled = names;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    EXPECT_EQ(Groups(shuffled, 16), groups) << "listing " << listing;
  }
}

TEST(ComparisonGroup, GroupsAreSymmetricOfTheirSizeAndEveryServerIsComparedByThatMany) {
  std::vector<std::string> names = Names(1000);
  for (size_t size : {size_t{4}, size_t{16}, size_t{64}}) {
    auto groups = Groups(names, size);
    std::map<std::string, size_t> compared_by;
    for (const auto& [server, group] : groups) {
      EXPECT_EQ(group.size(), size) << server;
      EXPECT_FALSE(group.count(server)) << server << " is in its own group";
      for (const std::string& peer : group) {
        EXPECT_TRUE(groups[peer].count(server)) << server << " sends to " << peer << ", which does not compare it";
        ++compared_by[peer];
      }
    }
    for (const std::string& name : names) EXPECT_EQ(compared_by[name], size) << name;
  }
}

TEST(ComparisonGroup, TheGroupsConnectTheWholeCluster) {
  std::vector<std::string> names = Names(1000);
  auto groups = Groups(names, 4);
  std::set<std::string> reached{names[0]};
  std::vector<std::string> frontier{names[0]};
  while (!frontier.empty()) {
    std::string server = frontier.back();
    frontier.pop_back();
    for (const std::string& peer : groups[server]) {
      if (reached.insert(peer).second) frontier.push_back(peer);
    }
  }
  EXPECT_EQ(reached.size(), names.size());
}

TEST(ComparisonGroup, AServerJoiningOrLeavingChangesOnlyTheGroupsNearIt) {
  constexpr size_t kSize = 16;
  std::vector<std::string> names = Names(1000);
  auto before = Groups(names, kSize);
  std::vector<std::string> joined = names;
  joined.push_back("pvfs-io-new");
  auto after = Groups(joined, kSize);
  size_t changed = 0;
  for (const std::string& name : names) changed += before[name] != after[name];
  EXPECT_LE(changed, kSize) << "of " << names.size();
  EXPECT_EQ(after["pvfs-io-new"].size(), kSize);

  std::vector<std::string> left(names.begin() + 1, names.end());
  auto without = Groups(left, kSize);
  changed = 0;
  for (const std::string& name : left) changed += before[name] != without[name];
  EXPECT_LE(changed, kSize);
}

TEST(ComparisonGroup, ServersAreComparedWithTheirOwnKind) {
  // 40 I/O servers, 12 metadata servers, and 3 of kinds too small for a
  // group of their own.
  std::vector<std::string> names = Names(40, "io-"), kinds(40, "data");
  for (const std::string& name : Names(12, "meta-")) {
    names.push_back(name);
    kinds.push_back("metadata");
  }
  for (const char* odd : {"odd-a", "odd-b", "odd-c"}) {
    names.push_back(odd);
    kinds.push_back(odd);
  }
  ComparisonRing ring(names, kinds);
  for (size_t self = 0; self < names.size(); ++self) {
    std::vector<size_t> group = ring.GroupOf(self, 8);
    ASSERT_EQ(group.size(), 8u) << names[self];
    for (size_t peer : group) {
      if (kinds[self] == "metadata") {
        EXPECT_EQ(kinds[peer], "metadata") << names[self] << " compared with " << names[peer];
      } else {
        EXPECT_NE(kinds[peer], "metadata") << names[self] << " compared with " << names[peer];
      }
      std::vector<size_t> back = ring.GroupOf(peer, 8);
      EXPECT_NE(std::find(back.begin(), back.end(), self), back.end()) << "not symmetric: " << names[self];
    }
  }
  // The three odd servers, too few for a ring, joined the largest one.
  EXPECT_EQ(ring.RingSize(0), 43u);
  EXPECT_EQ(ring.RingSize(40), 12u);
  EXPECT_EQ(ring.RingSize(52), 43u);

  // With kinds enough of them make a ring of their own; a kind of four
  // servers is compared with the other small kinds.
  std::vector<std::string> small_names = Names(12, "io-"), small_kinds(12, "data");
  for (const std::string& name : Names(5, "meta-")) {
    small_names.push_back(name);
    small_kinds.push_back("metadata");
  }
  ComparisonRing small(small_names, small_kinds);
  EXPECT_EQ(small.RingSize(0), 12u);
  EXPECT_EQ(small.RingSize(12), 5u);
  std::vector<size_t> meta_group = small.GroupOf(12, 64);
  EXPECT_EQ(meta_group, (std::vector<size_t>{13, 14, 15, 16})) << "every other metadata server";
}

TEST(ComparisonGroup, ThePeerConfigurationNamesWhoComparesEachServerItJudges) {
  PeerConfigSources sources;
  for (size_t i = 0; i < 5; ++i) {
    sources.peers += (i ? "," : "") + std::string("s") + std::to_string(i) + "=127.0.0.1:" + std::to_string(20000 + i);
  }
  sources.self = "s0";
  EXPECT_TRUE(LoadPeerConfig(sources).Scorers().empty()) << "one group: every server compares every other";

  sources.peers.clear();
  for (size_t i = 0; i < 100; ++i) {
    sources.peers += (i ? "," : "") + std::string("s") + std::to_string(i) + "=127.0.0.1:" + std::to_string(20000 + i);
  }
  sources.group_size = "8";
  sources.self = "s42";
  PeerConfig config = LoadPeerConfig(sources);
  ASSERT_TRUE(config.errors.empty()) << config.errors.front();
  auto scorers = config.Scorers();
  ASSERT_EQ(scorers.size(), 9u) << "itself and its 8 peers";
  std::vector<std::string> names;
  for (const PeerEndpoint& server : config.servers) names.push_back(server.name);
  for (const auto& [server, its_scorers] : scorers) {
    ASSERT_EQ(its_scorers.size(), 9u) << server;
    EXPECT_EQ(its_scorers.front(), server) << "a server's own analyzer judges it too";
    size_t index = size_t(std::find(names.begin(), names.end(), server) - names.begin());
    for (size_t peer : ComparisonGroup(names, index, 8)) {
      EXPECT_NE(std::find(its_scorers.begin(), its_scorers.end(), names[peer]), its_scorers.end()) << server;
    }
  }
}

TEST(ComparisonGroup, ThePeerConfigurationGroupsByKind) {
  PeerConfigSources sources;
  for (size_t i = 0; i < 20; ++i) {
    sources.peers += (i ? "," : "") + std::string("s") + std::to_string(i) + (i < 6 ? "@meta" : "") +
                     "=127.0.0.1:" + std::to_string(20000 + i);
  }
  sources.self = "s2";
  PeerConfig config = LoadPeerConfig(sources);
  ASSERT_TRUE(config.errors.empty()) << config.errors.front();
  std::vector<PeerEndpoint> peers = config.Peers();
  ASSERT_EQ(peers.size(), 5u) << "the other metadata servers";
  for (const PeerEndpoint& peer : peers) EXPECT_EQ(peer.kind, "meta") << peer.name;
}

TEST(ComparisonGroup, ThePeerConfigurationSendsToTheGroupAndRefusesABadSize) {
  PeerConfigSources sources;
  for (size_t i = 0; i < 100; ++i) {
    sources.peers += (i ? "," : "") + std::string("s") + std::to_string(i) + "=127.0.0.1:" + std::to_string(20000 + i);
  }
  sources.self = "s42";
  PeerConfig config = LoadPeerConfig(sources);
  ASSERT_TRUE(config.errors.empty()) << config.errors.front();
  EXPECT_EQ(config.group_size, kDefaultGroupSize);
  EXPECT_EQ(config.Peers().size(), kDefaultGroupSize);

  sources.group_size = "8";
  config = LoadPeerConfig(sources);
  ASSERT_TRUE(config.errors.empty()) << config.errors.front();
  std::vector<PeerEndpoint> peers = config.Peers();
  ASSERT_EQ(peers.size(), 8u);
  std::vector<std::string> names;
  for (const PeerEndpoint& server : config.servers) names.push_back(server.name);
  std::vector<size_t> group = ComparisonGroup(names, *config.self, 8);
  for (size_t i = 0; i < group.size(); ++i) EXPECT_EQ(peers[i].name, names[group[i]]);

  for (const char* bad : {"7", "2", "2048", "many", "-8"}) {
    sources.group_size = bad;
    config = LoadPeerConfig(sources);
    ASSERT_EQ(config.errors.size(), 1u) << bad;
    EXPECT_NE(config.errors[0].find("LIMPWATCH_PEER_GROUP_SIZE='" + std::string(bad) + "'"), std::string::npos)
        << config.errors[0];
    EXPECT_EQ(config.group_size, kDefaultGroupSize);
  }
}

TEST(ComparisonGroup, TheStartLinesPeersSayTheyAreTheGroupOfALargerCluster) {
  std::vector<std::string> errors;
  PeerTransportOptions options;
  options.bind = *PeerAddress::ParseNumeric("127.0.0.1:0");
  options.peers = ParsePeerList("s1=127.0.0.1:9,s2=127.0.0.1:10,s3=127.0.0.1:11,s4=127.0.0.1:12", &errors);
  ASSERT_TRUE(errors.empty()) << errors.front();
  options.cluster_servers = 10;
  std::string error;
  std::unique_ptr<PeerTransport> transport = PeerTransport::Create(options, &error);
  ASSERT_TRUE(transport) << error;
  auto exchange = MakeTransportExchange(std::move(transport), [](const std::string&) {});
  std::string described = exchange->Describe();
  EXPECT_EQ(described.rfind("4 (s1, s2, s3, s4, the comparison group of 4 among the cluster's 10 servers) over ", 0), 0u)
      << described;

  options.peers = ParsePeerList("s1=127.0.0.1:9,s2=127.0.0.1:10,s3=127.0.0.1:11,s4=127.0.0.1:12", &errors);
  options.kind = "metadata";
  transport = PeerTransport::Create(options, &error);
  ASSERT_TRUE(transport) << error;
  described = MakeTransportExchange(std::move(transport), [](const std::string&) {})->Describe();
  EXPECT_NE(described.find("the comparison group of 4 of kind metadata among the cluster's 10 servers"),
            std::string::npos)
      << described;
}

}  // namespace
}  // namespace limpwatch::analyzer
