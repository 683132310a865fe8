// iptables chains of the test-bed, for what nftables cannot say here: this
// kernel has the NFQUEUE target of x_tables but not the nft queue
// expression, so the network-delay fault sends a server's packets to a
// netfilter queue with iptables. Each fault adds one chain of its own in the
// filter table, named limpwatch_tb_<what>_<port> like the nft tables, jumped
// to from OUTPUT for loopback; clear-all removes every chain of that prefix.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_IPTABLES_CONTROL_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_IPTABLES_CONTROL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::testbed::launcher {

// Whether iptables can queue packets here (root, installed, the kernel has
// the NFQUEUE target and netfilter queues); *why if not.
bool IptablesQueueAvailable(std::string* why);

// Creates `chain`, queueing the TCP packets to and from `port` on queue
// `queue` (accepted unqueued while no reader is bound), and jumps to it from
// OUTPUT on loopback, where each packet passes once.
bool IptablesAddQueueChain(const std::string& chain, uint16_t port, uint16_t queue, std::string* error);

// `iptables -L CHAIN -v -n -x`; empty when the chain is absent.
std::string IptablesListChain(const std::string& chain);

// Packets counted by the chain's rules so far.
uint64_t IptablesChainPackets(const std::string& chain);

// Removes the jump and the chain (nothing to do when absent); also the nft
// table iptables-nft made for them when `drop_empty_table` and nothing else
// uses it.
bool IptablesRemoveChain(const std::string& chain, bool drop_empty_table, std::string* error);

// True when iptables' filter table exists now (before a fault adds to it).
bool IptablesFilterTableExists();

// Every chain whose name starts with limpwatch_tb_.
std::vector<std::string> IptablesTestbedChains();

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_IPTABLES_CONTROL_H_
