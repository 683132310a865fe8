// The peer transport on real loopback sockets, through io_uring and through
// the plain-socket fallback: exchange, authentication, every rejection class
// counted, liveness, bounded waits.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "limpwatch/analyzer/inherited_descriptors.h"
#include "limpwatch/analyzer/peer_transport.h"
#include "limpwatch/analyzer/transport_exchange.h"
#include "peer/loopback.h"
#include "peer/summary_builder.h"
#include "peer/temp_dir.h"

namespace limpwatch::analyzer {
namespace {

using namespace std::chrono_literals;
using testing::Address;
using testing::ConnectAll;
using testing::Endpoint;
using testing::MakeSummary;
using testing::OpenTransport;
using testing::PollUntil;
using testing::RawSocket;

PeerKey KeyOf(uint8_t fill) {
  std::string error;
  return *PeerKey::FromBytes(std::vector<uint8_t>(24, fill), &error);
}

PeerSummary SummaryOf(const std::string& node, uint64_t window, uint64_t boot = 1) {
  return MakeSummary({.node = node, .features = 60, .metrics = 3, .boot_id = boot, .window = window});
}

PeerSummary AsDecoded(const PeerSummary& summary) {
  std::vector<uint8_t> bytes;
  EncodeSummary(summary, nullptr, &bytes);
  return DecodeSummary(bytes, nullptr).decoded.summary;
}

class PeerTransportTest : public ::testing::TestWithParam<IoPreference> {
 protected:
  void SetUp() override {
    unsetenv(kIoUringVariable);
    if (GetParam() == IoPreference::kAuto && !testing::IoUringAvailable()) {
      GTEST_SKIP() << "io_uring is not available to this process";
    }
  }

  std::unique_ptr<PeerTransport> Open(const std::string& bind = "127.0.0.1:0",
                                      std::optional<PeerKey> key = std::nullopt) {
    std::string error;
    auto transport = OpenTransport(GetParam(), bind, std::move(key), &error);
    EXPECT_TRUE(transport) << error;
    if (transport) {
      EXPECT_EQ(transport->io_path(), GetParam() == IoPreference::kAuto ? IoPath::kIoUring : IoPath::kPlainSockets)
          << transport->fallback_reason();
    }
    return transport;
  }
};

TEST_P(PeerTransportTest, ThreeServersExchangeTheirSummaries) {
  auto a = Open(), b = Open(), c = Open();
  ASSERT_TRUE(a && b && c);
  ASSERT_TRUE(ConnectAll({a.get(), b.get(), c.get()}));
  std::vector<PeerTransport*> all = {a.get(), b.get(), c.get()};
  const std::vector<std::string> names = {"server-a", "server-b", "server-c"};

  for (uint64_t window = 1; window <= 3; ++window) {
    for (size_t i = 0; i < all.size(); ++i) {
      SendReport report = all[i]->Send(SummaryOf(names[i], window));
      EXPECT_EQ(report.encode_error, EncodeError::kNone);
      EXPECT_EQ(report.destinations, 2u);
    }
    for (size_t i = 0; i < all.size(); ++i) {
      auto received = PollUntil(*all[i], 2);
      ASSERT_EQ(received.size(), 2u) << "window " << window << " at " << names[i];
      std::set<std::string> senders;
      for (const auto& summary : received) {
        senders.insert(summary.summary.node);
        EXPECT_EQ(summary.summary.window, window);
        EXPECT_TRUE(SameSummary(summary.summary, AsDecoded(SummaryOf(summary.summary.node, window))));
        EXPECT_GE(summary.peer_index, 0);
        EXPECT_EQ(summary.authentication, Authentication::kNone);
        EXPECT_EQ(summary.new_stream, window == 1);
        EXPECT_EQ(all[i]->peer_table().entries()[summary.peer_index].endpoint.address, summary.source);
      }
      EXPECT_EQ(senders.count(names[i]), 0u);
      EXPECT_EQ(senders.size(), 2u);
    }
  }
  for (PeerTransport* transport : all) {
    PeerCounters counters = transport->counters();
    EXPECT_EQ(counters.summaries_sent, 3u);
    EXPECT_EQ(counters.sends, 6u);
    EXPECT_EQ(counters.send_errors, 0u);
    EXPECT_EQ(counters.received, 6u);
    EXPECT_EQ(counters.accepted, 6u);
    EXPECT_EQ(counters.new_streams, 2u);
    EXPECT_EQ(counters.TotalRejected(), 0u);
    for (const auto& entry : transport->peer_table().entries()) {
      EXPECT_TRUE(entry.heard);
      EXPECT_EQ(entry.last_window, 3u);
      EXPECT_EQ(entry.accepted, 3u);
      EXPECT_EQ(entry.restarts, 0u);
    }
  }
}

TEST_P(PeerTransportTest, Ipv6Loopback) {
  if (!testing::Ipv6LoopbackAvailable()) GTEST_SKIP() << "no IPv6 loopback on this host";
  auto a = Open("[::1]:0"), b = Open("[::1]:0");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->local_address().is_ipv6());
  ASSERT_TRUE(ConnectAll({a.get(), b.get()}));
  a->Send(SummaryOf("v6-a", 1));
  b->Send(SummaryOf("v6-b", 1));
  auto at_a = PollUntil(*a, 1);
  auto at_b = PollUntil(*b, 1);
  ASSERT_EQ(at_a.size(), 1u);
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_a[0].summary.node, "v6-b");
  EXPECT_EQ(at_b[0].summary.node, "v6-a");
  EXPECT_EQ(at_a[0].source, b->local_address());
}

TEST_P(PeerTransportTest, DualStackSocketReachesAndRecognisesIpv4Peers) {
  if (!testing::Ipv6LoopbackAvailable()) GTEST_SKIP() << "no IPv6 on this host";
  auto six = Open("[::]:0"), four = Open("127.0.0.1:0");
  ASSERT_TRUE(six && four);
  std::string error;
  ASSERT_TRUE(six->SetPeers({Endpoint("four", four->local_address())}, &error)) << error;
  PeerAddress six_via_ipv4 = Address("127.0.0.1:" + std::to_string(six->local_address().port()));
  ASSERT_TRUE(four->SetPeers({Endpoint("six", six_via_ipv4)}, &error)) << error;
  six->Send(SummaryOf("dual", 1));
  four->Send(SummaryOf("plain4", 1));
  auto at_four = PollUntil(*four, 1);
  auto at_six = PollUntil(*six, 1);
  ASSERT_EQ(at_four.size(), 1u);
  ASSERT_EQ(at_six.size(), 1u);
  // The IPv4-mapped source is recognised as the configured IPv4 peer.
  EXPECT_EQ(at_six[0].source, four->local_address());
  EXPECT_EQ(at_six[0].peer_index, 0);
}

TEST_P(PeerTransportTest, SharedKeyAuthenticatesAndEveryOtherKeyingIsRefusedOrFlagged) {
  auto keyed = Open("127.0.0.1:0", KeyOf(1));
  auto friend_ = Open("127.0.0.1:0", KeyOf(1));
  auto stranger = Open("127.0.0.1:0", KeyOf(2));
  auto keyless = Open("127.0.0.1:0");
  ASSERT_TRUE(keyed && friend_ && stranger && keyless);
  std::string error;
  ASSERT_TRUE(keyed->SetPeers({Endpoint("friend", friend_->local_address()),
                               Endpoint("stranger", stranger->local_address()),
                               Endpoint("keyless", keyless->local_address())},
                              &error));
  for (auto* sender : {friend_.get(), stranger.get(), keyless.get()}) {
    ASSERT_TRUE(sender->SetPeers({Endpoint("keyed", keyed->local_address())}, &error));
  }
  friend_->Send(SummaryOf("friend", 1));
  stranger->Send(SummaryOf("stranger", 1));
  keyless->Send(SummaryOf("keyless", 1));
  keyed->Send(SummaryOf("keyed", 1));  // to all three

  auto accepted = PollUntil(*keyed, 1);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].summary.node, "friend");
  EXPECT_EQ(accepted[0].authentication, Authentication::kVerified);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (keyed->counters().received < 3 && std::chrono::steady_clock::now() < deadline) keyed->Poll(50ms);
  PeerCounters counters = keyed->counters();
  EXPECT_EQ(counters.received, 3u);
  EXPECT_EQ(counters.Rejected(DecodeError::kBadAuthentication), 1u);
  EXPECT_EQ(counters.Rejected(DecodeError::kUnauthenticated), 1u);

  // A receiver without a key decodes the tagged summary and says it could not check it.
  auto at_keyless = PollUntil(*keyless, 1);
  ASSERT_EQ(at_keyless.size(), 1u);
  EXPECT_EQ(at_keyless[0].authentication, Authentication::kUnverified);
  EXPECT_EQ(keyless->counters().accepted_unverified, 1u);
  // Another key: refused.
  auto at_stranger = PollUntil(*stranger, 1, 300ms);
  EXPECT_TRUE(at_stranger.empty());
  EXPECT_EQ(stranger->counters().Rejected(DecodeError::kBadAuthentication), 1u);
}

// Sends crafted datagrams from a configured peer's address and checks that
// each lands in its own counter.
TEST_P(PeerTransportTest, EveryRejectionClassIsCounted) {
  auto receiver = Open();
  ASSERT_TRUE(receiver);
  RawSocket peer;
  RawSocket stranger;
  std::string error;
  ASSERT_TRUE(receiver->SetPeers({Endpoint("peer", peer.address())}, &error));
  PeerAddress to = receiver->local_address();

  PeerSummary window1 = SummaryOf("crafted", 1, /*boot=*/100);
  std::vector<uint8_t> valid;
  ASSERT_EQ(EncodeSummary(window1, nullptr, &valid), EncodeError::kNone);
  auto variant = [&](auto change) {
    std::vector<uint8_t> bytes = valid;
    change(bytes);
    return bytes;
  };
  size_t first_feature = kPeerWireHeaderBytes + kPeerWireVerdictListBytes + window1.node.size() + kPeerWireBytesPerMetric;
  std::vector<std::pair<DecodeError, std::vector<uint8_t>>> sent = {
      {DecodeError::kNone, valid},
      {DecodeError::kReplayed, valid},
      {DecodeError::kTruncated, variant([](auto& b) { b.resize(40); })},
      {DecodeError::kOversized, std::vector<uint8_t>(2000, 'L')},
      {DecodeError::kBadMagic, variant([](auto& b) { b[0] = 'X'; })},
      {DecodeError::kForeignVersion, variant([](auto& b) { b[4] = b[6] = kPeerWireMajor + 1; })},
      {DecodeError::kBadLength, variant([](auto& b) { b.push_back(0); })},
      {DecodeError::kBadCount, variant([](auto& b) { b[14] = 0xFF; })},
      {DecodeError::kUnsortedKeys,
       variant([&](auto& b) { std::copy_n(b.begin() + first_feature, 4, b.begin() + first_feature + 6); })},
      {DecodeError::kNonFiniteValue, variant([&](auto& b) {
         b[first_feature + 4] = 0xC0;  // bfloat16 0x7FC0: NaN
         b[first_feature + 5] = 0x7F;
       })},
  };
  // A new boot takes over; then the old boot is stale.
  std::vector<uint8_t> reboot;
  PeerSummary rebooted = SummaryOf("crafted", 0, /*boot=*/200);
  rebooted.window_end_unix_ms = window1.window_end_unix_ms + 60'000;
  ASSERT_EQ(EncodeSummary(rebooted, nullptr, &reboot), EncodeError::kNone);
  sent.push_back({DecodeError::kNone, reboot});
  std::vector<uint8_t> old_boot;
  ASSERT_EQ(EncodeSummary(SummaryOf("crafted", 2, /*boot=*/100), nullptr, &old_boot), EncodeError::kNone);
  sent.push_back({DecodeError::kStaleBoot, old_boot});

  // One datagram at a time, so order (and so the replay verdicts) is certain.
  for (const auto& [expected, bytes] : sent) {
    ASSERT_TRUE(peer.SendTo(to, bytes));
    uint64_t before = receiver->counters().received;
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (receiver->counters().received == before && std::chrono::steady_clock::now() < deadline) {
      receiver->Poll(50ms);
    }
    ASSERT_EQ(receiver->counters().received, before + 1) << DecodeErrorName(expected);
  }
  ASSERT_TRUE(stranger.SendTo(to, valid));
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (receiver->counters().received < sent.size() + 1 && std::chrono::steady_clock::now() < deadline) {
    receiver->Poll(50ms);
  }

  PeerCounters counters = receiver->counters();
  EXPECT_EQ(counters.received, sent.size() + 1);
  EXPECT_EQ(counters.accepted, 2u);
  EXPECT_EQ(counters.new_streams, 2u);
  for (const auto& [expected, bytes] : sent) {
    if (expected != DecodeError::kNone) {
      EXPECT_EQ(counters.Rejected(expected), 1u) << DecodeErrorName(expected);
    }
  }
  EXPECT_EQ(counters.Rejected(DecodeError::kUnknownSender), 1u);
  EXPECT_EQ(counters.Malformed(), 4u);
  EXPECT_EQ(counters.TotalRejected(), counters.received - counters.accepted);
  EXPECT_NE(receiver->last_rejection().find("from " + stranger.address().ToString()), std::string::npos)
      << receiver->last_rejection();
  EXPECT_NE(counters.ToString().find("rejected.stale_boot=1"), std::string::npos) << counters.ToString();
  const PeerLiveness& liveness = receiver->peer_table().entries()[0];
  EXPECT_EQ(liveness.boot_id, 200u);
  EXPECT_EQ(liveness.restarts, 1u);
  EXPECT_EQ(liveness.accepted, 2u);

  // With a key configured, a datagram without a tag or with a wrong one.
  auto keyed = Open("127.0.0.1:0", KeyOf(9));
  ASSERT_TRUE(keyed->SetPeers({Endpoint("peer", peer.address())}, &error));
  PeerKey wrong = KeyOf(8);
  std::vector<uint8_t> wrongly_signed;
  ASSERT_EQ(EncodeSummary(window1, &wrong, &wrongly_signed), EncodeError::kNone);
  ASSERT_TRUE(peer.SendTo(keyed->local_address(), valid));
  ASSERT_TRUE(peer.SendTo(keyed->local_address(), wrongly_signed));
  deadline = std::chrono::steady_clock::now() + 5s;
  while (keyed->counters().received < 2 && std::chrono::steady_clock::now() < deadline) keyed->Poll(50ms);
  EXPECT_EQ(keyed->counters().Rejected(DecodeError::kUnauthenticated), 1u);
  EXPECT_EQ(keyed->counters().Rejected(DecodeError::kBadAuthentication), 1u);
}

// More datagrams queued than the io_uring channel keeps receives armed for:
// one Poll still takes them all (up to its cap), as recvfrom in a loop would.
TEST_P(PeerTransportTest, OnePollDrainsABurstLargerThanTheArmedReceives) {
  auto receiver = Open();
  std::vector<std::unique_ptr<PeerTransport>> senders;
  std::vector<PeerEndpoint> peers;
  for (int i = 0; i < 4; ++i) {
    senders.push_back(Open());
    ASSERT_TRUE(senders.back());
    peers.push_back(Endpoint("s" + std::to_string(i), senders.back()->local_address()));
  }
  std::string error;
  ASSERT_TRUE(receiver->SetPeers(peers, &error));
  for (auto& sender : senders) ASSERT_TRUE(sender->SetPeers({Endpoint("r", receiver->local_address())}, &error));
  constexpr uint64_t kWindows = 50;  // 200 datagrams: under the default cap of 256
  for (uint64_t window = 1; window <= kWindows; ++window) {
    for (size_t i = 0; i < senders.size(); ++i) senders[i]->Send(SummaryOf("s" + std::to_string(i), window));
  }
  std::this_thread::sleep_for(200ms);  // all of them queued on the receiver's socket
  auto received = receiver->Poll(0ns);
  EXPECT_EQ(received.size(), senders.size() * kWindows);
  EXPECT_EQ(receiver->counters().TotalRejected(), 0u);
}

// The analyzer's own rhythm: once per tick it polls without waiting and
// sends, while the peers' summaries arrive whenever they do (before or
// after its send). Whatever arrived must come out of that one Poll, tick
// after tick, or a backlog grows until peers look silent.
TEST_P(PeerTransportTest, TickByTickPollingKeepsUpWithEveryPeer) {
  auto self = Open(), left = Open(), right = Open();
  ASSERT_TRUE(self && left && right);
  ASSERT_TRUE(ConnectAll({self.get(), left.get(), right.get()}));
  for (uint64_t tick = 1; tick <= 8; ++tick) {
    left->Send(SummaryOf("left", tick));
    right->Send(SummaryOf("right", tick));
    std::this_thread::sleep_for(30ms);
    bool send_first = tick % 2 == 0;  // a receive completes while it sends
    if (send_first) self->Send(SummaryOf("self", tick));
    auto received = self->Poll(0ns);
    EXPECT_EQ(received.size(), 2u) << "tick " << tick << (send_first ? ", sent first" : ", polled first");
    if (!send_first) self->Send(SummaryOf("self", tick));
    left->Poll(0ns);
    right->Poll(0ns);
  }
}

TEST_P(PeerTransportTest, PollNeverWaitsLongerThanItsTimeout) {
  auto quiet = Open();
  ASSERT_TRUE(quiet);
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  EXPECT_TRUE(quiet->Poll(0ns).empty());
  EXPECT_LT(Clock::now() - start, 100ms);
  for (auto timeout : {20ms, 300ms}) {
    start = Clock::now();
    EXPECT_TRUE(quiet->Poll(timeout).empty());
    auto waited = Clock::now() - start;
    EXPECT_GE(waited, timeout - 1ms);
    // Scheduling slack on a loaded 2-core machine, never a second timeout.
    EXPECT_LT(waited, timeout + 250ms);
  }
}

TEST_P(PeerTransportTest, PollReturnsAsSoonAsADatagramArrives) {
  auto a = Open(), b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(ConnectAll({a.get(), b.get()}));
  std::thread sender([&] {
    std::this_thread::sleep_for(50ms);
    b->Send(SummaryOf("late", 1));
  });
  auto start = std::chrono::steady_clock::now();
  auto received = a->Poll(10s);
  auto waited = std::chrono::steady_clock::now() - start;
  sender.join();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_LT(waited, 3s);
}

TEST_P(PeerTransportTest, SendNeverBlocksEvenWhenNobodyReads) {
  auto sender = Open();
  RawSocket deaf1, deaf2;
  ASSERT_TRUE(sender);
  std::string error;
  ASSERT_TRUE(sender->SetPeers({Endpoint("deaf1", deaf1.address()), Endpoint("deaf2", deaf2.address())}, &error));
  PeerSummary summary = SummaryOf("flood", 1);
  constexpr int kSummaries = 3000;
  auto slowest = std::chrono::nanoseconds(0);
  for (int i = 0; i < kSummaries; ++i) {
    summary.window = i;
    auto start = std::chrono::steady_clock::now();
    sender->Send(summary);
    slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
  }
  sender->Poll(0ns);  // reaps the last send completions
  PeerCounters counters = sender->counters();
  EXPECT_EQ(counters.summaries_sent, uint64_t{kSummaries});
  EXPECT_EQ(counters.sends + counters.send_errors, uint64_t{2 * kSummaries});
  EXPECT_GT(counters.sends, 0u);
  EXPECT_LT(slowest, 200ms);
}

TEST_P(PeerTransportTest, PeerTableTracksSilenceAndRestarts) {
  auto a = Open(), b = Open();
  RawSocket ghost;  // configured, never speaks
  ASSERT_TRUE(a && b);
  std::string error;
  ASSERT_TRUE(a->SetPeers({Endpoint("b", b->local_address()), Endpoint("ghost", ghost.address())}, &error));
  ASSERT_TRUE(b->SetPeers({Endpoint("a", a->local_address())}, &error));
  int64_t created = MonotonicNowNs();
  for (uint64_t window = 1; window <= 3; ++window) b->Send(SummaryOf("b", window, 7));
  ASSERT_EQ(PollUntil(*a, 3).size(), 3u);
  PeerSummary restarted = SummaryOf("b", 0, 8);  // b restarted: new boot, window 0, later time
  restarted.window_end_unix_ms += 10'000;
  b->Send(restarted);
  ASSERT_EQ(PollUntil(*a, 1).size(), 1u);

  const PeerTable& table = a->peer_table();
  ASSERT_EQ(table.entries().size(), 2u);
  const PeerLiveness& heard = table.entries()[0];
  EXPECT_TRUE(heard.heard);
  EXPECT_EQ(heard.node, "b");
  EXPECT_EQ(heard.boot_id, 8u);
  EXPECT_EQ(heard.last_window, 0u);
  EXPECT_EQ(heard.accepted, 4u);
  EXPECT_EQ(heard.restarts, 1u);
  EXPECT_GT(heard.last_accept_unix_ms, 0u);
  const PeerLiveness& silent = table.entries()[1];
  EXPECT_FALSE(silent.heard);
  EXPECT_EQ(silent.accepted, 0u);
  constexpr int64_t kSecond = 1'000'000'000;
  int64_t now = MonotonicNowNs();
  // The ghost's silence counts from when its entry was made.
  EXPECT_GE(table.SilentNs(1, now), now - created);
  EXPECT_LT(table.SilentNs(0, now), table.SilentNs(1, now));
  EXPECT_EQ(table.SilentWindows(1, now + 10 * kSecond, kSecond),
            static_cast<uint64_t>(10 + table.SilentNs(1, now) / kSecond));
  EXPECT_EQ(table.SilentWindows(0, heard.last_accept_monotonic_ns + 5 * kSecond + kSecond / 2, kSecond), 5u);
}

// A server that hears no peer says so once, and once more when it hears one
// again; the start line names its peers.
TEST_P(PeerTransportTest, AnExchangeThatHearsNoPeerSaysSoOnce) {
  auto a = Open(), b = Open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(ConnectAll({a.get(), b.get()}));
  PeerTransport* sender = b.get();
  const std::string own_address = a->local_address().ToString();
  const std::string path = IoPathName(a->io_path());
  std::vector<std::string> lines;
  auto exchange = MakeTransportExchange(
      std::move(a), [&](const std::string& line) { lines.push_back(line); }, std::chrono::milliseconds(200));
  EXPECT_EQ(exchange->Describe(),
            "1 (" + sender->local_address().ToString() + ") over " + path + " on " + own_address + ", no key");
  EXPECT_TRUE(exchange->Receive().empty());
  EXPECT_TRUE(lines.empty()) << "too early: " << lines.front();
  usleep(300'000);
  EXPECT_TRUE(exchange->Receive().empty());
  EXPECT_TRUE(exchange->Receive().empty());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("analyzer: no summary accepted from any of the 1 peers for 0."), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("(datagrams received 0, rejected 0)"), std::string::npos) << lines[0];
  sender->Send(SummaryOf("b", 1));
  std::vector<PeerSummary> heard;
  for (int attempt = 0; attempt < 100 && heard.empty(); ++attempt) {
    usleep(10'000);
    heard = exchange->Receive();
  }
  ASSERT_EQ(heard.size(), 1u);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "analyzer: summaries from the peers arrive again");
}

// Closing waits for the armed receive to be cancelled, not for a datagram
// or the one-second safety bound.
TEST_P(PeerTransportTest, ClosingWithAReceiveArmedIsPrompt) {
  auto transport = Open();
  ASSERT_TRUE(transport);
  transport->Poll(1ms);
  auto start = std::chrono::steady_clock::now();
  transport.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 500ms);
}

// A daemonizing server forks with its analyzer's transport open and the
// parent exits without tearing anything down; the child closes the
// analyzer's inherited descriptors (as the library's fork handler does) and
// starts its own analyzer on the same port. Nothing the child inherited may
// keep the port bound once the parent is gone.
TEST_P(PeerTransportTest, AForkedChildDoesNotKeepTheParentsPortBound) {
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  pid_t server = fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    close(result[0]);
    std::string error;
    auto transport = OpenTransport(GetParam(), "127.0.0.1:0", std::nullopt, &error);
    if (!transport) _exit(3);
    std::string port = std::to_string(transport->local_address().port());
    int parent_alive[2];
    if (pipe(parent_alive) != 0) _exit(3);
    pid_t daemon = fork();
    if (daemon == 0) {
      close(parent_alive[1]);
      CloseInheritedAnalyzerDescriptors();
      char byte;
      while (read(parent_alive[0], &byte, 1) > 0) {
      }
      // A bind waits up to 5 s for the port, as after a restart.
      char verdict = OpenTransport(IoPreference::kPlainSockets, "127.0.0.1:" + port, std::nullopt, &error) ? '0' : '1';
      if (write(result[1], &verdict, 1) != 1) _exit(2);
      _exit(0);
    }
    // The daemonizing parent leaves at once, its transport still open.
    transport.release();
    _exit(daemon > 0 ? 0 : 3);
  }
  close(result[1]);
  int status = 0;
  ASSERT_EQ(waitpid(server, &status, 0), server);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  char verdict = 0;
  ASSERT_EQ(read(result[0], &verdict, 1), 1);
  close(result[0]);
  EXPECT_EQ(verdict, '0') << "the daemon could not bind its parent's peer port within 5 s";
}

TEST_P(PeerTransportTest, UnreachableFamilyAndBusyPortAreClearErrors) {
  auto four = Open("127.0.0.1:0");
  ASSERT_TRUE(four);
  std::string error;
  EXPECT_FALSE(four->SetPeers({Endpoint("six", Address("[::1]:4000"))}, &error));
  EXPECT_NE(error.find("is IPv6 but the bind address"), std::string::npos) << error;
  auto clash = OpenTransport(GetParam(), four->local_address().ToString(), std::nullopt, &error);
  EXPECT_FALSE(clash);
  EXPECT_NE(error.find("cannot bind UDP"), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(BothPaths, PeerTransportTest,
                         ::testing::Values(IoPreference::kAuto, IoPreference::kPlainSockets),
                         [](const auto& info) {
                           return std::string(info.param == IoPreference::kAuto ? "IoUring" : "PlainSockets");
                         });

TEST(PeerTransportFallback, EnvironmentForcesPlainSockets) {
  setenv(kIoUringVariable, "0", 1);
  std::string error;
  auto a = OpenTransport(IoPreference::kAuto, "127.0.0.1:0", std::nullopt, &error);
  auto b = OpenTransport(IoPreference::kAuto, "127.0.0.1:0", std::nullopt, &error);
  unsetenv(kIoUringVariable);
  ASSERT_TRUE(a && b) << error;
  EXPECT_EQ(a->io_path(), IoPath::kPlainSockets);
  EXPECT_NE(a->fallback_reason().find("LIMPWATCH_IO_URING=0"), std::string::npos) << a->fallback_reason();
  ASSERT_TRUE(ConnectAll({a.get(), b.get()}));
  a->Send(SummaryOf("forced", 1));
  EXPECT_EQ(PollUntil(*b, 1).size(), 1u);
}

// The analyzer's way in: everything from LIMPWATCH_* variables.
class PeerTransportEnvironment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"LIMPWATCH_PEERS", "LIMPWATCH_SELF", "LIMPWATCH_PEER_KEY_FILE", "LIMPWATCH_IO_URING"}) {
      unsetenv(name);
    }
  }

  std::unique_ptr<PeerTransport> CreateAs(const std::string& self, std::vector<std::string>* problems) {
    setenv("LIMPWATCH_SELF", self.c_str(), 1);
    return PeerTransport::CreateFromEnvironment(problems);
  }

  // Two loopback ports nobody holds (bound once, then released).
  std::string PeerList() {
    uint16_t first, second;
    {
      RawSocket one, two;
      first = one.address().port();
      second = two.address().port();
    }
    return "one=127.0.0.1:" + std::to_string(first) + ",two=127.0.0.1:" + std::to_string(second);
  }
};

TEST_F(PeerTransportEnvironment, TwoServersFromOnePeerListWithAKey) {
  testing::TempDir dir;
  setenv("LIMPWATCH_PEERS", PeerList().c_str(), 1);
  setenv("LIMPWATCH_PEER_KEY_FILE", dir.Write("key", "a shared secret of the cluster\n").c_str(), 1);
  std::vector<std::string> problems;
  auto one = CreateAs("one", &problems);
  auto two = CreateAs("two", &problems);
  ASSERT_TRUE(one && two) << (problems.empty() ? "" : problems.front());
  EXPECT_TRUE(problems.empty()) << problems.front();
  one->Send(SummaryOf("one", 1));
  auto received = PollUntil(*two, 1);
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].authentication, Authentication::kVerified);
  EXPECT_EQ(received[0].peer_index, 0);
  EXPECT_EQ(two->peer_table().entries()[0].endpoint.name, "one");
}

TEST_F(PeerTransportEnvironment, AnUnusableKeyFileDisablesTheExchangeInsteadOfDowngrading) {
  testing::TempDir dir;
  setenv("LIMPWATCH_PEERS", PeerList().c_str(), 1);
  setenv("LIMPWATCH_PEER_KEY_FILE", dir.Write("key", "a shared secret of the cluster", 0644).c_str(), 1);
  std::vector<std::string> problems;
  EXPECT_FALSE(CreateAs("one", &problems));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("group or others"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("peer exchange disabled"), std::string::npos) << problems[0];
}

TEST_F(PeerTransportEnvironment, NoPeersConfiguredMeansNoTransportAndNoNoise) {
  std::vector<std::string> problems;
  unsetenv("LIMPWATCH_PEERS");
  unsetenv("LIMPWATCH_SELF");
  EXPECT_FALSE(PeerTransport::CreateFromEnvironment(&problems));
  EXPECT_TRUE(problems.empty()) << problems.front();
}

}  // namespace
}  // namespace limpwatch::analyzer
