#include "launcher/nft_control.h"

#include <unistd.h>

#include <sstream>

#include "launcher/command_runner.h"

namespace limpwatch::testbed::launcher {
namespace {

constexpr int kNftTimeoutMs = 10000;

}  // namespace

bool NftAvailable(std::string* why) {
  if (geteuid() != 0) {
    *why = "nftables rules need root";
    return false;
  }
  if (FindProgram("nft").empty()) {
    *why = "nft is not installed (Debian package nftables; tools/setup.sh installs it)";
    return false;
  }
  CommandResult probe = RunCommand({"nft", "list", "tables"}, "", kNftTimeoutMs);
  if (probe.exit_status != 0) {
    *why = "nft does not work here: " + probe.output;
    return false;
  }
  return true;
}

bool NftApply(const std::string& script, std::string* error) {
  CommandResult result = RunCommand({"nft", "-f", "-"}, script, kNftTimeoutMs);
  if (result.exit_status != 0) {
    *error = "nft: " + result.output;
    return false;
  }
  return true;
}

std::string NftListTable(const std::string& family, const std::string& name) {
  CommandResult result = RunCommand({"nft", "-a", "list", "table", family, name}, "", kNftTimeoutMs);
  return result.exit_status == 0 ? result.output : std::string();
}

bool NftDeleteTable(const std::string& family, const std::string& name, std::string* error) {
  if (NftListTable(family, name).empty()) return true;
  CommandResult result = RunCommand({"nft", "delete", "table", family, name}, "", kNftTimeoutMs);
  if (result.exit_status != 0) {
    *error = "nft delete table " + family + " " + name + ": " + result.output;
    return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> NftTestbedTables() {
  std::vector<std::pair<std::string, std::string>> tables;
  CommandResult result = RunCommand({"nft", "list", "tables"}, "", kNftTimeoutMs);
  std::istringstream lines(result.output);
  std::string word, family, name;
  while (lines >> word >> family >> name) {  // "table inet limpwatch_tb_loss_4000"
    if (word == "table" && name.rfind(kNftTablePrefix, 0) == 0) tables.emplace_back(family, name);
  }
  return tables;
}

}  // namespace limpwatch::testbed::launcher
