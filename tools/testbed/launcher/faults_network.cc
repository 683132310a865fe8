// Network faults. There is no tc netem in this kernel, so:
//
// packet-loss: an nftables table drops a random --percent of the TCP packets
//   received on the server's port (receive-pktloss: data and ACKs from its
//   clients) and/or sent from it (send-pktloss), with `numgen random`. Every
//   connection to that server, open or new, loses packets; the others do not.
// network-delay, two mechanisms (--mechanism queue|relay, default: queue
//   where the kernel has netfilter queues, else relay; the evidence says
//   which one ran):
//   queue: an iptables chain sends every TCP packet to and from the server's
//     port to a netfilter queue, where limpwatch-testbed-delayer holds it
//     --delay-ms before accepting it: each direction is delayed once, the
//     connections stay end to end, open ones included, and both kernels see
//     the longer round trip, as on a slow link. `clear` removes the chain,
//     then stops the delayer, which lets every held packet through first.
//   relay: a loopback relay (limpwatch-testbed-relay) holds every chunk of
//     bytes --delay-ms before passing it on, in both directions; an nftables
//     NAT rule redirects new connections to the server's port into the relay
//     (the relay's own upstream connection carries a socket mark the rule
//     skips), and a filter rule resets connections opened before the inject
//     at their next packet, so their clients reconnect through the relay (the
//     test-bed client reconnects and repeats an idempotent request after a
//     reset; a create in flight fails once). The server's own TCP peer is the
//     relay, so its kernel sees no longer round trip. `clear` removes the
//     rules, then the relay; relayed connections break and reconnect directly.
// write-network-hog / read-network-hog: a third process, a real client,
//   streams WRITEs into (or READs of holes out of) a scratch object on that
//   server (client/workload_network_hog.cc): the server's network path works,
//   its disk hardly does. A raw TCP flood would be rejected as a bad magic.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/json_line.h"
#include "common/ping_client.h"
#include "launcher/fault.h"
#include "launcher/fault_registry.h"
#include "launcher/iptables_control.h"
#include "launcher/nft_control.h"
#include "launcher/process_control.h"

namespace limpwatch::testbed::launcher {
namespace {

// Marks the relay's upstream connections ("LW").
constexpr uint32_t kRelayMark = 0x4c57;

std::string TableName(const char* what, uint16_t port) {
  return std::string(kNftTablePrefix) + what + "_" + std::to_string(port);
}

// The counters of the rules in a table listing ("packets N").
uint64_t DroppedPackets(const std::string& listing) {
  uint64_t total = 0;
  for (size_t at = listing.find("packets "); at != std::string::npos; at = listing.find("packets ", at + 8)) {
    total += std::strtoull(listing.c_str() + at + 8, nullptr, 10);
  }
  return total;
}

class PacketLossFault : public Fault {
 public:
  const char* name() const override { return "packet-loss"; }
  const char* description() const override {
    return "nftables drops a random --percent of the TCP packets received on (receive) and/or sent from (send) the "
           "server's port (numgen random); tc netem is not available in this kernel";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    direction_ = flags->GetString("direction", "receive");
    if (direction_ != "receive" && direction_ != "send" && direction_ != "both") {
      *error = "--direction is receive, send or both";
      return false;
    }
    return flags->GetDouble("percent", 5, 0.1, 100, &percent_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    if (!NftAvailable(error)) return false;
    std::string table = TableName("loss", target.port);
    auto per_mille = static_cast<unsigned>(percent_ * 10 + 0.5);
    std::string port = std::to_string(target.port);
    std::string rules;
    if (direction_ != "send") {
      rules += "    tcp dport " + port + " numgen random mod 1000 < " + std::to_string(per_mille) +
               " counter drop comment \"receive-pktloss\"\n";
    }
    if (direction_ != "receive") {
      rules += "    tcp sport " + port + " numgen random mod 1000 < " + std::to_string(per_mille) +
               " counter drop comment \"send-pktloss\"\n";
    }
    // On loopback every packet passes the input hook once, on the receiving side.
    std::string script = "table inet " + table +
                         " {\n  chain input {\n    type filter hook input priority 0; policy accept;\n" + rules +
                         "  }\n}\n";
    record->Set("nft_family", "inet");
    record->Set("nft_table", table);
    record->Set("per_mille", static_cast<uint64_t>(per_mille));
    record->Set("direction", direction_);
    return NftApply(script, error);
  }

  bool Verify(const FaultTarget&, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    std::string listing = NftListTable("inet", record.Get("nft_table"));
    std::string expected = "numgen random mod 1000 < " + record.Get("per_mille");
    if (listing.find(expected) == std::string::npos) {
      *error = "table inet " + record.Get("nft_table") + " has no rule with '" + expected + "'";
      return false;
    }
    evidence->Add("nft_table", "inet " + record.Get("nft_table"))
        .Add("direction", record.Get("direction"))
        .Add("percent", double(record.GetUint("per_mille")) / 10)
        .Add("rule_listed", true)
        .Add("mechanism", "nftables numgen random");
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    std::string table = record.Get("nft_table");
    if (table.empty()) return true;
    evidence->Add("packets_dropped", DroppedPackets(NftListTable("inet", table)));
    bool ok = NftDeleteTable("inet", table, error) && NftListTable("inet", table).empty();
    evidence->Add("nft_table_removed", ok);
    return ok;
  }

 private:
  std::string direction_ = "receive";
  double percent_ = 5;
};

class NetworkDelayFault : public Fault {
 public:
  const char* name() const override { return "network-delay"; }
  const char* description() const override {
    return "every TCP packet to and from the server's port is held --delay-ms: in a netfilter queue "
           "(--mechanism queue, the default where the kernel has it), or by a loopback relay that nftables "
           "redirects the server's connections through (--mechanism relay)";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    mechanism_ = flags->GetString("mechanism", "auto");
    if (mechanism_ != "auto" && mechanism_ != "queue" && mechanism_ != "relay") {
      *error = "--mechanism is queue, relay or auto";
      return false;
    }
    return flags->GetUint("delay-ms", 20, 1, 10000, &delay_ms_, error) &&
           flags->GetUint("stall-ms", 0, 0, 60000, &stall_ms_, error) &&
           flags->GetUint("stall-every-ms", 0, 0, 600000, &stall_every_ms_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    PingResult before = PingServer("127.0.0.1", target.port, 5, 2000);
    record->Set("rtt_before_us", static_cast<uint64_t>(before.median_rtt_us));
    record->Set("delay_ms", delay_ms_);
    bool stalls = stall_ms_ > 0 && stall_every_ms_ > 0;
    if (mechanism_ == "queue" || (mechanism_ == "auto" && !stalls)) {
      std::string why;
      if (InjectQueued(target, record, &why)) return true;
      if (mechanism_ == "queue") {
        *error = why;
        return false;
      }
      record->Set("queue_refused", why);
    }
    return InjectRelayed(target, record, error);
  }

  bool Verify(const FaultTarget& target, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    bool queued = record.Get("mechanism") == "queue";
    if (queued) {
      if (IptablesListChain(record.Get("iptables_chain")).find("NFQUEUE") == std::string::npos) {
        *error = "iptables chain " + record.Get("iptables_chain") + " has no NFQUEUE rule";
        return false;
      }
      if (!HelperAlive(record, "delayer")) {
        *error = "the packet delayer is not running";
        return false;
      }
    } else {
      std::string listing = NftListTable("ip", record.Get("nft_table"));
      if (listing.find("redirect to :" + record.Get("relay_port")) == std::string::npos) {
        *error = "table ip " + record.Get("nft_table") + " has no redirect to the relay";
        return false;
      }
      if (!HelperAlive(record, "relay")) {
        *error = "the relay is not running";
        return false;
      }
    }
    // A new connection's PING round trip is delayed once each way.
    PingResult after = PingServer("127.0.0.1", target.port, 5, 10000);
    if (!after.ok) {
      *error = std::string("PING through the ") + (queued ? "queue" : "relay") + " failed: " + after.message;
      return false;
    }
    double expected_us = 2.0 * double(record.GetUint("delay_ms")) * 1000 * 0.9;
    if (queued) {
      evidence->Add("mechanism", "netfilter queue (iptables NFQUEUE + limpwatch-testbed-delayer)")
          .Add("iptables_chain", record.Get("iptables_chain"))
          .Add("queue", record.GetUint("queue"));
    } else {
      evidence->Add("mechanism", "loopback relay + nftables redirect")
          .Add("relay_port", record.GetUint("relay_port"))
          .Add("nft_table", "ip " + record.Get("nft_table"));
      if (!record.Get("queue_refused").empty()) evidence->Add("queue_refused", record.Get("queue_refused"));
    }
    evidence->Add("rtt_before_us", record.GetUint("rtt_before_us")).Add("rtt_after_us", after.median_rtt_us);
    if (after.median_rtt_us < expected_us) {
      *error = "round trip is " + std::to_string(after.median_rtt_us) + " us, expected >= " +
               std::to_string(expected_us);
      return false;
    }
    return true;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    bool ok = true;
    if (!record.Get("iptables_chain").empty() || !record.Get("delayer_output").empty()) {
      ok = ClearQueued(record, evidence, error);
    }
    if (!record.Get("nft_table").empty() || !record.Get("relay_output").empty()) {
      ok = ClearRelayed(record, evidence, error) && ok;
    }
    return ok;
  }

 private:
  bool InjectQueued(const FaultTarget& target, StateRecord* record, std::string* why) {
    if (!IptablesQueueAvailable(why)) return false;
    uint16_t queue = target.port;  // one queue per server port
    std::string output = target.dir + "/fault-" + record->Get("id") + "-delayer.out";
    if (!StartHelper(target.tools_dir + "/limpwatch-testbed-delayer",
                     {"--queue", std::to_string(queue), "--delay-ms", std::to_string(delay_ms_)}, {}, output,
                     "delayer", record, why)) {
      return false;
    }
    bool ready = false;
    for (int waited = 0; waited < 5000 && !ready; waited += 20) {
      std::string line = LastLine(output);
      if (JsonStringField(line, "event") == "ready") {
        ready = true;
      } else if (!HelperAlive(*record, "delayer")) {
        *why = "the packet delayer exited: " + line;
        break;
      } else {
        SleepMs(20);
      }
    }
    std::string chain = TableName("delay", target.port);
    record->Set("queue", queue);
    record->Set("iptables_filter_existed", IptablesFilterTableExists() ? "yes" : "no");
    if (ready && IptablesAddQueueChain(chain, target.port, queue, why)) {
      record->Set("mechanism", "queue");
      record->Set("iptables_chain", chain);
      return true;
    }
    if (!ready && why->empty()) *why = "the packet delayer did not bind its queue within 5 s";
    std::string ignored;
    StopHelper(*record, "delayer", 2000, &ignored);
    return false;
  }

  bool InjectRelayed(const FaultTarget& target, StateRecord* record, std::string* error) {
    if (!NftAvailable(error)) return false;
    std::string output = target.dir + "/fault-" + record->Get("id") + "-relay.out";
    std::vector<std::string> arguments = {
        "--upstream-port",  std::to_string(target.port),    "--delay-ms", std::to_string(delay_ms_),
        "--mark",           std::to_string(kRelayMark),     "--stall-ms", std::to_string(stall_ms_),
        "--stall-every-ms", std::to_string(stall_every_ms_)};
    if (!StartHelper(target.tools_dir + "/limpwatch-testbed-relay", arguments, {}, output, "relay", record, error)) {
      return false;
    }
    uint16_t relay_port = 0;
    for (int waited = 0; waited < 5000 && relay_port == 0; waited += 20) {
      if (!HelperAlive(*record, "relay")) {
        *error = "the relay exited: " + LastLine(output);
        return false;
      }
      auto port = JsonNumberField(LastLine(output), "port");
      if (port) relay_port = static_cast<uint16_t>(*port);
      if (relay_port == 0) SleepMs(20);
    }
    if (relay_port == 0) {
      *error = "the relay did not report its port";
      return false;
    }
    record->Set("mechanism", "relay");
    record->Set("relay_port", relay_port);
    std::string table = TableName("delay", target.port);
    record->Set("nft_family", "ip");
    record->Set("nft_table", table);
    // nat: new connections to the server's port go to the relay (not the relay's own, marked ones).
    // filter (after nat): a packet still addressed to the port belongs to a connection opened
    // before the inject; it is answered with a TCP reset, so that client reconnects, via the relay.
    std::string port = std::to_string(target.port);
    std::string mark = std::to_string(kRelayMark);
    std::string script = "table ip " + table + " {\n" +
                         "  chain redirect_new {\n    type nat hook output priority -100; policy accept;\n" +
                         "    ip daddr 127.0.0.1 tcp dport " + port + " meta mark != " + mark +
                         " counter redirect to :" + std::to_string(relay_port) + " comment \"network-delay\"\n  }\n" +
                         "  chain reset_open {\n    type filter hook output priority 0; policy accept;\n" +
                         "    ip daddr 127.0.0.1 tcp dport " + port + " meta mark != " + mark +
                         " counter reject with tcp reset comment \"network-delay: reconnect through the relay\"\n" +
                         "  }\n}\n";
    return NftApply(script, error);
  }

  bool ClearQueued(const StateRecord& record, JsonLine* evidence, std::string* error) {
    // The chain goes first, so no new packet is queued; then the delayer,
    // which accepts every packet it still holds before it exits.
    std::string chain = record.Get("iptables_chain");
    bool ok = true;
    if (!chain.empty()) {
      evidence->Add("packets_queued", IptablesChainPackets(chain));
      ok = IptablesRemoveChain(chain, record.Get("iptables_filter_existed") == "no", error);
      evidence->Add("iptables_chain_removed", IptablesListChain(chain).empty());
    }
    ok = StopHelper(record, "delayer", 2000, error) && ok;
    auto delayed = JsonNumberField(LastLine(record.Get("delayer_output")), "delayed");
    if (delayed) evidence->Add("packets_delayed", static_cast<uint64_t>(*delayed));
    evidence->Add("delayer_stopped", !HelperAlive(record, "delayer"));
    return ok;
  }

  bool ClearRelayed(const StateRecord& record, JsonLine* evidence, std::string* error) {
    bool ok = true;
    std::string table = record.Get("nft_table");
    // Order matters: the relay goes first, while the NAT rules and their
    // bindings are intact, so its closing FIN / RST reach the clients
    // translated and they reconnect (measured: with the chains flushed or the
    // table deleted first, the close never reaches them and they wait for
    // their timeout). A connection attempted in the few milliseconds before
    // the table is gone is refused; the client retries after a pause.
    bool have_table = !table.empty() && !NftListTable("ip", table).empty();
    ok = StopHelper(record, "relay", 2000, error);
    if (have_table) {
      SleepMs(100);  // the relay's closing segments are on their way
      ok = NftDeleteTable("ip", table, error) && NftListTable("ip", table).empty() && ok;
    }
    evidence->Add("nft_table_removed", NftListTable("ip", table).empty())
        .Add("relay_stopped", !HelperAlive(record, "relay"));
    return ok;
  }

  std::string mechanism_ = "auto";
  uint64_t delay_ms_ = 20;
  uint64_t stall_ms_ = 0;
  uint64_t stall_every_ms_ = 0;
};

class NetworkHogFault : public Fault {
 public:
  NetworkHogFault(const char* name, const char* command) : name_(name), command_(command) {}
  const char* name() const override { return name_; }
  const char* description() const override {
    return command_ == std::string("hog-write")
               ? "a third process streams 4 MiB WRITEs into a scratch object on the server (unaligned, so they stay "
                 "in its page cache): load on its network path, little on its disk"
               : "a third process streams 4 MiB READs of a sparse scratch object on the server (holes read without "
                 "disk I/O): load on its network path, none on its disk";
  }

  bool Configure(CommandLine* flags, std::string* error) override {
    return flags->GetUint("streams", 2, 1, 64, &streams_, error);
  }

  bool Inject(const FaultTarget& target, StateRecord* record, std::string* error) override {
    return StartHelper(target.tools_dir + "/limpwatch-testbed-client",
                       {"--config", target.config_path, command_, "--server", std::to_string(target.server),
                        "--streams", std::to_string(streams_)},
                       {"LIMPWATCH_DISABLE=1", "LIMPWATCH_NAME=" + target.alias + "-" + command_},
                       target.dir + "/fault-" + record->Get("id") + "-" + command_ + ".out", "hog", record, error);
  }

  bool Verify(const FaultTarget&, const StateRecord& record, JsonLine* evidence, std::string* error) override {
    // Wait for a progress line that moved bytes (the hog prints one per second).
    for (int waited = 0; waited < 8000; waited += 100) {
      if (!HelperAlive(record, "hog")) {
        *error = "the network hog exited: " + LastLine(record.Get("hog_output"));
        return false;
      }
      std::string line = LastLine(record.Get("hog_output"));
      auto rate = JsonNumberField(line, "mib_per_s");
      if (JsonStringField(line, "event") == "progress" && rate && *rate > 0) {
        evidence->Add("hog", command_).Add("hog_mib_per_s", *rate).Add("streams", streams_);
        return true;
      }
      SleepMs(100);
    }
    *error = "the network hog moved no bytes within 8 s: " + LastLine(record.Get("hog_output"));
    return false;
  }

  bool Clear(const StateRecord& record, const ClearContext&, JsonLine* evidence, std::string* error) override {
    // SIGTERM lets the hog remove its scratch object first.
    bool ok = StopHelper(record, "hog", 15000, error);
    evidence->Add("hog_stopped", ok);
    return ok;
  }

 private:
  const char* name_;
  const char* command_;
  uint64_t streams_ = 2;
};

}  // namespace

void RegisterNetworkFaults(FaultRegistry* registry) {
  registry->Add("packet-loss", [] { return std::make_unique<PacketLossFault>(); });
  registry->Add("network-delay", [] { return std::make_unique<NetworkDelayFault>(); });
  registry->Add("write-network-hog",
                [] { return std::make_unique<NetworkHogFault>("write-network-hog", "hog-write"); });
  registry->Add("read-network-hog", [] { return std::make_unique<NetworkHogFault>("read-network-hog", "hog-read"); });
}

}  // namespace limpwatch::testbed::launcher
