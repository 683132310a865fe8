#include "launcher/iptables_control.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "launcher/command_runner.h"
#include "launcher/nft_control.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr int kIptablesTimeoutMs = 10000;

CommandResult Iptables(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), {"iptables", "-w", "5"});
  return RunCommand(arguments, "", kIptablesTimeoutMs);
}

bool KernelHasQueueTarget() {
  std::ifstream targets("/proc/net/ip_tables_targets");
  std::string name;
  while (targets >> name) {
    if (name == "NFQUEUE") return true;
  }
  return false;
}

std::vector<std::string> JumpRule(const std::string& chain) { return {"OUTPUT", "-o", "lo", "-j", chain}; }

// `iptables -S` of the filter table: only the three built-in policies.
bool FilterTableIsEmpty() {
  CommandResult rules = Iptables({"-S"});
  if (rules.exit_status != 0) return false;
  std::istringstream lines(rules.output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.rfind("-P ", 0) != 0) return false;
  }
  return true;
}

}  // namespace

bool IptablesQueueAvailable(std::string* why) {
  if (geteuid() != 0) {
    *why = "iptables rules need root";
    return false;
  }
  if (FindProgram("iptables").empty()) {
    *why = "iptables is not installed (Debian package iptables; tools/setup.sh installs it)";
    return false;
  }
  if (access("/proc/net/netfilter/nfnetlink_queue", R_OK) != 0 || !KernelHasQueueTarget()) {
    *why = "this kernel has no netfilter queue (nfnetlink_queue and the NFQUEUE target)";
    return false;
  }
  return true;
}

bool IptablesAddQueueChain(const std::string& chain, uint16_t port, uint16_t queue, std::string* error) {
  std::string port_text = std::to_string(port), queue_text = std::to_string(queue);
  std::vector<std::vector<std::string>> steps = {
      {"-N", chain},
      {"-A", chain, "-p", "tcp", "--dport", port_text, "-j", "NFQUEUE", "--queue-num", queue_text, "--queue-bypass"},
      {"-A", chain, "-p", "tcp", "--sport", port_text, "-j", "NFQUEUE", "--queue-num", queue_text, "--queue-bypass"},
  };
  std::vector<std::string> jump = JumpRule(chain);
  jump.insert(jump.begin(), "-I");
  steps.push_back(jump);
  for (const auto& step : steps) {
    CommandResult result = Iptables(step);
    if (result.exit_status != 0) {
      *error = "iptables " + step[0] + " " + step[1] + ": " + result.output;
      std::string ignored;
      IptablesRemoveChain(chain, false, &ignored);
      return false;
    }
  }
  return true;
}

std::string IptablesListChain(const std::string& chain) {
  CommandResult result = Iptables({"-L", chain, "-v", "-n", "-x"});
  return result.exit_status == 0 ? result.output : std::string();
}

uint64_t IptablesChainPackets(const std::string& chain) {
  std::istringstream lines(IptablesListChain(chain));
  uint64_t total = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string packets, bytes, target;
    if (fields >> packets >> bytes >> target && target == "NFQUEUE") total += std::strtoull(packets.c_str(), nullptr, 10);
  }
  return total;
}

bool IptablesRemoveChain(const std::string& chain, bool drop_empty_table, std::string* error) {
  bool ok = true;
  if (!IptablesListChain(chain).empty()) {
    std::vector<std::string> unjump = JumpRule(chain);
    unjump.insert(unjump.begin(), "-D");
    for (int jumps = 0; jumps < 16 && Iptables(unjump).exit_status == 0; ++jumps) {
    }
    for (const char* step : {"-F", "-X"}) {
      CommandResult result = Iptables({step, chain});
      if (result.exit_status != 0) {
        *error = std::string("iptables ") + step + " " + chain + ": " + result.output;
        ok = false;
      }
    }
  }
  std::string why;
  if (ok && drop_empty_table && NftAvailable(&why) && !NftListTable("ip", "filter").empty() && FilterTableIsEmpty()) {
    ok = NftDeleteTable("ip", "filter", error);
  }
  return ok && IptablesListChain(chain).empty();
}

bool IptablesFilterTableExists() {
  // The legacy backend's filter table always exists; iptables-nft keeps it
  // in nftables and makes it on first use.
  CommandResult version = RunCommand({"iptables", "--version"}, "", kIptablesTimeoutMs);
  if (version.output.find("nf_tables") == std::string::npos) return true;
  return !NftListTable("ip", "filter").empty();
}

std::vector<std::string> IptablesTestbedChains() {
  std::vector<std::string> chains;
  if (FindProgram("iptables").empty() || geteuid() != 0) return chains;
  CommandResult rules = Iptables({"-S"});
  std::istringstream lines(rules.output);
  for (std::string line; std::getline(lines, line);) {
    std::string prefix = std::string("-N ") + kNftTablePrefix;
    if (line.rfind(prefix, 0) == 0) chains.push_back(line.substr(3));
  }
  return chains;
}

}  // namespace limpwatch::testbed::launcher
