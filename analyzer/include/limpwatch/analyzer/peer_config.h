// Which servers exchange summaries, and which of them is this one.
//
// Three sources (host names are resolved when read, and only those of this
// server and its comparison group; never per window):
//
//   LIMPWATCH_PEERS=[name[@kind]=]host:port,[name[@kind]=]host:port,...
//       IPv4 ("10.0.0.1:4334"), IPv6 in brackets ("[::1]:4334") or a host
//       name. The port is limpwatch's UDP port. Without a name, an entry is
//       named by its "host:port" text. A kind after the name
//       ("m0@metadata=10.0.0.1:4334") puts the server in the comparison
//       groups of its kind only (comparison_group.h).
//
//   LIMPWATCH_PEERS_FILE=/etc/limpwatch/peers
//       The same entries in a file, separated by commas or lines; '#'
//       starts a comment. Unlike the variable, the file can change while
//       the servers run (peer_membership.h).
//
//   LIMPWATCH_PVFS_CONFIG=/etc/pvfs2-fs.conf
//       The PVFS / OrangeFS server configuration every server already
//       shares. Its <Aliases> section lists the servers:
//           Alias <name> tcp://<host>:<bmi-port>[,<other-bmi-address>...]
//       limpwatch listens on UDP port <bmi-port> + LIMPWATCH_PEER_PORT_OFFSET
//       (default 1000; 0 is allowed, UDP and TCP ports do not collide), or
//       on the port LIMPWATCH_PEER_PORTS=<alias>=<port>,... gives an alias.
//       The per-alias ports live in the environment, not in fs.conf, because
//       PVFS asserts that an Alias line has exactly two arguments.
//       A server's kind comes from the file systems' handle ranges: one
//       listed under <MetaHandleRanges> only is of kind "metadata", under
//       <DataHandleRanges> only "data", under both (the usual layout) none.
//
// The first set of LIMPWATCH_PEERS, LIMPWATCH_PEERS_FILE and
// LIMPWATCH_PVFS_CONFIG wins (and an error line names those ignored). The
// two files are read again when they change (peer_membership.h).
//
// This server is the entry named by LIMPWATCH_SELF (a name, or for
// LIMPWATCH_PEERS also the "host:port" text), else the entry named like
// LIMPWATCH_NAME. It binds to that entry's address and port unless
// LIMPWATCH_PEER_BIND=<ip>:<port> overrides it (e.g. "0.0.0.0:4334" or
// "[::]:4334"; a dual-stack IPv6 bind also reaches IPv4 peers).
//
// Every malformed entry gives one error line naming its origin (the file and
// line, or the variable and entry number); the good entries are kept.
#ifndef LIMPWATCH_ANALYZER_PEER_CONFIG_H_
#define LIMPWATCH_ANALYZER_PEER_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/analyzer/comparison_group.h"

#include "limpwatch/analyzer/peer_address.h"

namespace limpwatch::analyzer {

inline constexpr uint16_t kDefaultPeerPortOffset = 1000;

struct PeerEndpoint {
  std::string name;     // the alias, the given name, or "host:port"
  std::string host;     // as written
  uint16_t port = 0;    // limpwatch's UDP port
  PeerAddress address;  // valid when `resolved`
  std::string origin;   // "/etc/pvfs2-fs.conf:12" or "LIMPWATCH_PEERS entry 3"
  std::string kind;     // "" for none; servers are compared with their own kind
  // A numeric address is resolved as it is read; a host name only when this
  // server needs it (LoadPeerConfig): its own and its group's, so a cluster
  // of 10,000 named servers costs each server the lookups of its group only.
  bool resolved = false;
};

// The environment variables this configuration is read from, gathered so
// tests and tools can supply them without touching the process environment.
struct PeerConfigSources {
  std::string peers;        // LIMPWATCH_PEERS
  std::string peers_file;   // LIMPWATCH_PEERS_FILE
  std::string pvfs_config;  // LIMPWATCH_PVFS_CONFIG
  std::string self;         // LIMPWATCH_SELF
  std::string node_name;    // LIMPWATCH_NAME
  std::string port_offset;  // LIMPWATCH_PEER_PORT_OFFSET
  std::string alias_ports;  // LIMPWATCH_PEER_PORTS
  std::string bind;         // LIMPWATCH_PEER_BIND
  std::string group_size;   // LIMPWATCH_PEER_GROUP_SIZE

  static PeerConfigSources FromEnvironment();
};

struct PeerConfig {
  std::vector<PeerEndpoint> servers;  // every server, this one included, in file order
  std::optional<size_t> self;         // this server's index in `servers`
  std::optional<PeerAddress> bind_override;
  size_t group_size = kDefaultGroupSize;  // comparison_group.h
  std::vector<std::string> errors;    // one line each
  std::string source_file;  // the file the servers were read from; "" for LIMPWATCH_PEERS
  // Servers are listed but this one is not among them (LIMPWATCH_SELF or
  // LIMPWATCH_NAME matches none); the last error line says so, and no host
  // name was resolved.
  bool self_missing = false;

  // The servers to send to and compare with: this one's comparison group
  // (comparison_group.h), which is every other server in a cluster of at
  // most group_size + 1; all but this one when this one is not known. A
  // member whose host name did not resolve is left out (an error line said
  // so); it still holds its place in the ring, so the groups stay the same
  // on every server whatever their resolvers say.
  std::vector<PeerEndpoint> Peers() const;
  // Their indexes in `servers`, unresolved ones included.
  std::vector<size_t> PeerIndexes() const;
  // For this server and each server of its group, the names of the servers
  // that compare it: its own group and itself. Empty when every server
  // compares every other (at most group_size + 1 servers, all of one ring).
  std::map<std::string, std::vector<std::string>> Scorers() const;
  // Where to bind: the override, else this server's own address; nullopt
  // when neither is known.
  std::optional<PeerAddress> BindAddress() const;
};

// The file LoadPeerConfig reads the servers from: LIMPWATCH_PEERS_FILE or
// LIMPWATCH_PVFS_CONFIG by the precedence above; "" when LIMPWATCH_PEERS is
// set, or none is.
std::string PeerConfigFile(const PeerConfigSources& sources);

// Reads and checks everything, and resolves the host names of this server
// and its group. Never throws; problems are in errors.
PeerConfig LoadPeerConfig(const PeerConfigSources& sources);

// The entries of a LIMPWATCH_PEERS value; bad entries add to *errors. Host
// names are not resolved here (ResolvePeer).
std::vector<PeerEndpoint> ParsePeerList(std::string_view text, std::vector<std::string>* errors);

// The entries of a LIMPWATCH_PEERS_FILE file (origins "path:line").
std::vector<PeerEndpoint> ParsePeerFile(const std::string& path, std::vector<std::string>* errors);

// How fs.conf's BMI ports become limpwatch's UDP ports.
struct PvfsPortRule {
  uint16_t offset = kDefaultPeerPortOffset;
  std::vector<std::pair<std::string, uint16_t>> alias_ports;  // per-alias ports, which win
};

// Resolves a peer's host name if it is not yet; false with an error line
// ("origin: cannot resolve host ...") in *errors when it cannot be.
bool ResolvePeer(PeerEndpoint* peer, std::vector<std::string>* errors);

// The aliases of a PVFS configuration file; bad lines add to *errors. Host
// names are not resolved here (ResolvePeer).
std::vector<PeerEndpoint> ParsePvfsAliases(const std::string& path, const PvfsPortRule& rule,
                                           std::vector<std::string>* errors);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_CONFIG_H_
