// nftables tables of the test-bed: each network fault adds one table of its
// own, named limpwatch_tb_<what>_<port>, and removes it on clear; clear-all
// deletes every table whose name starts with limpwatch_tb_.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_NFT_CONTROL_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_NFT_CONTROL_H_

#include <string>
#include <vector>

namespace limpwatch::testbed::launcher {

inline constexpr const char* kNftTablePrefix = "limpwatch_tb_";

// Whether nft can be used here (installed, and we are root); *why if not.
bool NftAvailable(std::string* why);

// Loads a ruleset script (nft -f -). False with nft's message in *error.
bool NftApply(const std::string& script, std::string* error);

// `nft list table FAMILY NAME` (with -a for handles); empty when absent.
std::string NftListTable(const std::string& family, const std::string& name);

bool NftDeleteTable(const std::string& family, const std::string& name, std::string* error);

// (family, name) of every table starting with limpwatch_tb_.
std::vector<std::pair<std::string, std::string>> NftTestbedTables();

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_NFT_CONTROL_H_
