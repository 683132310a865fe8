// Fuzz target for the PVFS configuration reader (LIMPWATCH_PVFS_CONFIG:
// the <Aliases> of fs.conf, ParsePvfsAliases in analyzer/peer_config.h),
// read from a file as the analyzer reads it, under two port rules: the
// default offset, and an offset that overflows most BMI ports with a port
// of its own for one alias. Host names are looked up in /etc/hosts only
// (fuzz_support.h).
//
// Invariants, for every input and rule:
//   - aliases are unique, each with a host, a port other than 0 and, once
//     resolved (ResolvePeer), an address with that port or one error line
//     naming its line;
//   - an alias given a port of its own has it; any other has its BMI port
//     plus the offset;
//   - every error line names the file (or the variable of the port rule).
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "limpwatch/analyzer/peer_config.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

void Check(bool condition, const char* invariant) { Require(condition, "PVFS configuration", invariant); }

void CheckUnder(const std::string& path, const PvfsPortRule& rule) {
  std::vector<std::string> errors;
  std::vector<PeerEndpoint> servers = ParsePvfsAliases(path, rule, &errors);
  std::set<std::string> names;
  for (PeerEndpoint& server : servers) {
    Check(names.insert(server.name).second, "aliases are unique");
    Check(!server.name.empty() && !server.host.empty(), "an alias has a name and a host");
    std::vector<std::string> lookup_errors;
    if (ResolvePeer(&server, &lookup_errors)) {
      Check(server.port != 0 && server.address.port() == server.port, "and a port other than 0, its address's");
    } else {
      Check(lookup_errors.size() == 1 && lookup_errors[0].compare(0, server.origin.size(), server.origin) == 0,
            "or one error line naming its line");
    }
    Check(server.origin.compare(0, path.size() + 1, path + ":") == 0, "its origin is a line of the file");
    bool own_port = false;
    for (const auto& [alias, port] : rule.alias_ports) {
      if (alias == server.name) {
        Check(server.port == port, "an alias given a port of its own has it");
        own_port = true;
      }
    }
    if (!own_port) Check(server.port >= rule.offset, "any other has its BMI port plus the offset");
  }
  for (const std::string& error : errors) {
    Check(error.compare(0, path.size(), path) == 0 || error.compare(0, 21, "LIMPWATCH_PEER_PORTS:") == 0,
          "an error names the file or the port rule's variable");
  }
}

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer;
  using namespace limpwatch::analyzer::fuzzing;
  limpwatch::fuzzing::ResolveNamesFromHostsFileOnly();
  static limpwatch::fuzzing::InputFile file;
  const std::string& path = file.Write(std::span(data, size));
  CheckUnder(path, PvfsPortRule{});
  PvfsPortRule overflowing;
  overflowing.offset = 62000;
  overflowing.alias_ports = {{"server1", 4334}, {"meta", 1}};
  CheckUnder(path, overflowing);
  return 0;
}
