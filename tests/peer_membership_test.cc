// Membership that changes: the peer list file is read again when it changes,
// a clean re-read becomes the configuration (with who joined and who left),
// a bad one keeps the previous servers, and the transport follows: the peers
// that stay keep what was heard of them, those that left are refused.
#include "limpwatch/analyzer/peer_membership.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "limpwatch/analyzer/transport_exchange.h"
#include "peer/loopback.h"

namespace limpwatch::analyzer {
namespace {

using testing::Address;
using testing::Endpoint;
using testing::OpenTransport;

class PeerFile {
 public:
  PeerFile() : path_("/tmp/limpwatch-members-" + std::to_string(getpid()) + "-" + std::to_string(counter_++)) {}
  ~PeerFile() { std::remove(path_.c_str()); }
  // Written beside and renamed over, as an operator's tools do.
  void Write(const std::string& text) const {
    std::string staged = path_ + ".new";
    std::ofstream(staged) << text;
    ASSERT_EQ(std::rename(staged.c_str(), path_.c_str()), 0);
  }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

std::string Servers(const std::vector<int>& indexes) {
  std::string text = "# the cluster\n";
  for (int index : indexes) text += "s" + std::to_string(index) + "=127.0.0.1:" + std::to_string(5000 + index) + "\n";
  return text;
}

PeerConfigSources SourcesFor(const PeerFile& file, const std::string& self = "s0") {
  PeerConfigSources sources;
  sources.peers_file = file.path();
  sources.self = self;
  return sources;
}

const PeerMembership::Apply kAccept = [](const PeerConfig&, std::string*) { return true; };

std::vector<std::string> Names(const std::vector<PeerEndpoint>& endpoints) {
  std::vector<std::string> names;
  for (const PeerEndpoint& endpoint : endpoints) names.push_back(endpoint.name);
  return names;
}

TEST(PeerMembership, TheFileIsReadLikeThePeerListWithLinesAndComments) {
  PeerFile file;
  file.Write("s0=127.0.0.1:5000, s1@data=127.0.0.1:5001  # two on a line\n\ns2=127.0.0.1:5002\nbad entry\n");
  PeerConfig config = LoadPeerConfig(SourcesFor(file));
  EXPECT_EQ(Names(config.servers), (std::vector<std::string>{"s0", "s1", "s2"}));
  EXPECT_EQ(config.servers[1].kind, "data");
  EXPECT_EQ(config.servers[2].origin, file.path() + ":3");
  ASSERT_EQ(config.errors.size(), 1u);
  EXPECT_EQ(config.errors[0].rfind(file.path() + ":4: ", 0), 0u) << config.errors[0];
  EXPECT_EQ(config.source_file, file.path());
}

TEST(PeerMembership, AChangedFileGivesTheJoinedAndTheLeftPeers) {
  PeerFile file;
  file.Write(Servers({0, 1, 2, 3, 4}));
  PeerMembership membership = PeerMembership::Load(SourcesFor(file));
  EXPECT_EQ(membership.watched(), file.path());
  EXPECT_FALSE(membership.Recheck(kAccept));  // unchanged
  file.Write(Servers({0, 1, 2, 3, 5}));
  auto change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->applied);
  EXPECT_EQ(change->joined, std::vector<std::string>{"s5"});
  EXPECT_EQ(change->left, std::vector<std::string>{"s4"});
  EXPECT_EQ(Names(membership.config().Peers()), (std::vector<std::string>{"s1", "s2", "s3", "s5"}));
  EXPECT_NE(change->Describe().find("peers joined: s5; peers left: s4"), std::string::npos) << change->Describe();
  EXPECT_FALSE(membership.Recheck(kAccept));  // read once per change
}

TEST(PeerMembership, ABadReReadKeepsThePreviousServersUntilTheFileChangesAgain) {
  PeerFile file;
  file.Write(Servers({0, 1, 2}));
  PeerMembership membership = PeerMembership::Load(SourcesFor(file));
  // Cut short while written: the last entry lost its port.
  file.Write(Servers({0, 1}) + "s3=127.0.0.1:");
  auto change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->applied);
  EXPECT_NE(change->Describe().find("not used: " + file.path() + ":4"), std::string::npos) << change->Describe();
  EXPECT_NE(change->Describe().find("keeping the previous 3 servers"), std::string::npos) << change->Describe();
  EXPECT_EQ(Names(membership.config().servers), (std::vector<std::string>{"s0", "s1", "s2"}));
  EXPECT_FALSE(membership.Recheck(kAccept));
  file.Write(Servers({0, 1, 3}));
  change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->applied);
  EXPECT_EQ(Names(membership.config().servers), (std::vector<std::string>{"s0", "s1", "s3"}));
}

TEST(PeerMembership, AFileWithoutThisServerRetiresItAndPutBackItJoinsAgain) {
  PeerFile file;
  file.Write(Servers({0, 1, 2}));
  PeerMembership membership = PeerMembership::Load(SourcesFor(file));
  file.Write(Servers({1, 2}));
  auto change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->applied);
  EXPECT_TRUE(change->withdrawn);
  EXPECT_NE(change->Describe(2).find("this server is not among them: it compares nobody from now on, and keeps "
                                     "sending its summaries to its 2 peers"),
            std::string::npos)
      << change->Describe(2);
  EXPECT_EQ(Names(membership.config().Peers()), (std::vector<std::string>{"s1", "s2"}));  // still sent to
  file.Write(Servers({0, 1, 2, 3}));
  change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->applied);
  EXPECT_FALSE(change->withdrawn);
  EXPECT_EQ(change->joined, std::vector<std::string>{"s3"});
}

TEST(PeerMembership, AFileWithThisServerAtANewAddressOrNoneIsNotUsed) {
  PeerFile file;
  file.Write(Servers({0, 1, 2}));
  PeerMembership membership = PeerMembership::Load(SourcesFor(file));
  auto change = membership.Recheck(kAccept);
  EXPECT_FALSE(change);
  file.Write("s0=127.0.0.1:6000\n" + Servers({1, 2}));
  change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->applied);
  EXPECT_NE(change->Describe().find("only a restart can bind"), std::string::npos) << change->Describe();
  std::remove(file.path().c_str());
  change = membership.Recheck(kAccept);
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->applied);
  EXPECT_EQ(Names(membership.config().servers), (std::vector<std::string>{"s0", "s1", "s2"}));
}

TEST(PeerMembership, WhatTheTransportRefusesIsNotUsed) {
  PeerFile file;
  file.Write(Servers({0, 1}));
  PeerMembership membership = PeerMembership::Load(SourcesFor(file));
  file.Write(Servers({0, 1, 2}));
  auto change = membership.Recheck([](const PeerConfig&, std::string* error) {
    *error = "peer s2 is IPv6";
    return false;
  });
  ASSERT_TRUE(change);
  EXPECT_FALSE(change->applied);
  EXPECT_NE(change->Describe().find("not used: peer s2 is IPv6"), std::string::npos);
  EXPECT_EQ(membership.config().servers.size(), 2u);
}

TEST(PeerMembership, ThePeerListVariableIsNotWatched) {
  PeerConfigSources sources;
  sources.peers = "s0=127.0.0.1:5000,s1=127.0.0.1:5001";
  sources.self = "s0";
  PeerMembership membership = PeerMembership::Load(sources);
  EXPECT_EQ(membership.watched(), "");
  EXPECT_FALSE(membership.Recheck(kAccept));
}

// In a cluster of comparison groups, one server added anywhere changes the
// group of any server by at most one peer in and one out.
TEST(PeerMembership, OneServerAddedMovesAtMostOnePeerOfAnyGroup) {
  std::vector<int> before;
  for (int index = 0; index < 40; ++index) before.push_back(index);
  std::vector<int> after = before;
  after.push_back(40);
  PeerFile file;
  size_t changed_groups = 0;
  for (int self = 0; self < 40; ++self) {
    file.Write(Servers(before));
    PeerConfigSources sources = SourcesFor(file, "s" + std::to_string(self));
    sources.group_size = "8";
    PeerMembership membership = PeerMembership::Load(sources);
    ASSERT_EQ(membership.config().Peers().size(), 8u);
    file.Write(Servers(after));
    auto change = membership.Recheck(kAccept);
    ASSERT_TRUE(change);
    ASSERT_TRUE(change->applied);
    EXPECT_LE(change->joined.size(), 1u);
    EXPECT_EQ(change->left.size(), change->joined.size());
    changed_groups += change->joined.size();
  }
  // s40 joins 8 groups (it is scored by 8), each of which lets one go.
  EXPECT_EQ(changed_groups, 8u);
}

PeerSummary SummaryFrom(const std::string& node, uint64_t window) {
  PeerSummary summary;
  summary.node = node;
  summary.boot_id = 7;
  summary.window = window;
  summary.window_end_unix_ms = window * 1000;
  summary.window_ticks = 4;
  summary.tick_ms = 1000;
  return summary;
}

// The real transport under an exchange that follows the file: the peer that
// left is handed to the analyzer and refused from then on, the one that
// joined is heard, the one that stayed keeps its count.
TEST(PeerMembership, TheExchangeFollowsTheFileAndHandsOverThePeersThatLeft) {
  auto s1 = OpenTransport(IoPreference::kPlainSockets);
  auto s2 = OpenTransport(IoPreference::kPlainSockets);
  auto s3 = OpenTransport(IoPreference::kPlainSockets);
  ASSERT_TRUE(s1 && s2 && s3);
  auto line = [](const std::string& name, PeerTransport& transport) {
    return name + "=" + transport.local_address().ToString() + "\n";
  };
  PeerFile file;
  file.Write("s0=127.0.0.1:1\n" + line("s1", *s1) + line("s2", *s2));
  PeerConfigSources sources = SourcesFor(file);
  sources.bind = "127.0.0.1:0";
  auto membership = std::make_unique<PeerMembership>(PeerMembership::Load(sources));
  std::vector<std::string> problems;
  auto transport = PeerTransport::CreateFromConfig(membership->config(), &problems);
  ASSERT_TRUE(transport) << (problems.empty() ? "" : problems[0]);
  PeerAddress s0_address = transport->local_address();
  std::vector<std::string> log;
  auto exchange = MakeTransportExchange(std::move(transport), std::move(membership),
                                        [&](const std::string& text) { log.push_back(text); });
  std::string error;
  for (PeerTransport* peer : {s1.get(), s2.get(), s3.get()})
    ASSERT_TRUE(peer->SetPeers({Endpoint("s0", s0_address)}, &error));

  auto heard = [&](const std::vector<std::pair<PeerTransport*, std::string>>& senders, uint64_t window) {
    for (auto& [sender, name] : senders) sender->Send(SummaryFrom(name, window));
    std::set<std::string> nodes;
    for (int attempt = 0; attempt < 100 && nodes.size() < senders.size(); ++attempt) {
      for (const PeerSummary& summary : exchange->Receive()) nodes.insert(summary.node);
      usleep(10'000);
    }
    usleep(50'000);  // anything else, refused or not, arrives too
    for (const PeerSummary& summary : exchange->Receive()) nodes.insert(summary.node);
    return nodes;
  };
  EXPECT_EQ(heard({{s1.get(), "s1"}, {s2.get(), "s2"}, {s3.get(), "s3"}}, 1), (std::set<std::string>{"s1", "s2"}));
  EXPECT_TRUE(exchange->TakeDeparted().empty());

  file.Write("s0=127.0.0.1:1\n" + line("s1", *s1) + line("s3", *s3));
  EXPECT_EQ(heard({{s1.get(), "s1"}, {s2.get(), "s2"}, {s3.get(), "s3"}}, 2), (std::set<std::string>{"s1", "s3"}));
  EXPECT_EQ(exchange->TakeDeparted(), std::vector<std::string>{"s2"});
  EXPECT_TRUE(exchange->TakeDeparted().empty());
  bool logged = false;
  for (const std::string& text : log) logged |= text.find("peers joined: s3; peers left: s2") != std::string::npos;
  EXPECT_TRUE(logged);
  EXPECT_NE(exchange->Describe().find("2 (s1, s3)"), std::string::npos) << exchange->Describe();

  // Taken out itself: it forgets every peer and compares nobody.
  file.Write(line("s1", *s1) + line("s3", *s3));
  EXPECT_TRUE(heard({{s1.get(), "s1"}, {s3.get(), "s3"}}, 3).empty());
  EXPECT_EQ(exchange->TakeDeparted(), (std::vector<std::string>{"s1", "s3"}));
}

TEST(PeerMembership, APeerThatStaysKeepsWhatWasHeardOfIt) {
  auto receiver = OpenTransport(IoPreference::kPlainSockets);
  auto sender = OpenTransport(IoPreference::kPlainSockets);
  ASSERT_TRUE(receiver && sender);
  std::string error;
  ASSERT_TRUE(receiver->SetPeers({Endpoint("s1", sender->local_address())}, &error));
  ASSERT_TRUE(sender->SetPeers({Endpoint("s0", receiver->local_address())}, &error));
  sender->Send(SummaryFrom("s1", 1));
  ASSERT_EQ(testing::PollUntil(*receiver, 1).size(), 1u);
  ASSERT_TRUE(receiver->SetPeers({Endpoint("s1", sender->local_address()), Endpoint("s2", Address("127.0.0.1:9"))},
                                 &error));
  ASSERT_EQ(receiver->peer_table().entries().size(), 2u);
  EXPECT_EQ(receiver->peer_table().entries()[0].accepted, 1u);
  EXPECT_EQ(receiver->peer_table().entries()[0].last_window, 1u);
  EXPECT_FALSE(receiver->peer_table().entries()[1].heard);
  // The replay guard is kept: the same window again is refused.
  sender->Send(SummaryFrom("s1", 1));
  EXPECT_TRUE(testing::PollUntil(*receiver, 1, std::chrono::milliseconds(300)).empty());
}

// A peer that left is still sent to while it sends here (it may not have the
// new list yet, and must not see this server fall silent), and no longer
// once it stopped for former_peer_sends sends.
TEST(PeerMembership, APeerThatLeftIsAnsweredWhileItStillSends) {
  auto self = OpenTransport(IoPreference::kPlainSockets);
  auto former = OpenTransport(IoPreference::kPlainSockets);
  ASSERT_TRUE(self && former);
  std::string error;
  ASSERT_TRUE(self->SetPeers({Endpoint("s1", former->local_address())}, &error));
  ASSERT_TRUE(former->SetPeers({Endpoint("s0", self->local_address())}, &error));
  ASSERT_TRUE(self->SetPeers({}, &error));  // s1 left s0's list; s0 is still on s1's
  uint64_t window = 1;
  for (; window <= 8; ++window) {
    former->Send(SummaryFrom("s1", window));
    EXPECT_TRUE(testing::PollUntil(*self, 1, std::chrono::milliseconds(200)).empty());  // refused
    EXPECT_EQ(self->Send(SummaryFrom("s0", window)).destinations, 1u);
    EXPECT_EQ(testing::PollUntil(*former, 1).size(), 1u) << window;
  }
  // It stops: the send just made (window 8) and 4 more are its last.
  uint64_t answered = 1;
  for (; window <= 16; ++window) answered += self->Send(SummaryFrom("s0", window)).destinations;
  EXPECT_EQ(answered, AnalyzerConfig{}.peer_silence_windows);
  EXPECT_EQ(self->Send(SummaryFrom("s0", window)).destinations, 0u);
}

}  // namespace
}  // namespace limpwatch::analyzer
