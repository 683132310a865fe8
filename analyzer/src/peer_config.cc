#include "limpwatch/analyzer/peer_config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "host_port.h"

namespace limpwatch::analyzer {

namespace {

std::string Variable(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// Calls `visit(entry, number)` for each comma-separated entry (1-based),
// trimmed; empty entries are skipped (a trailing comma is harmless).
template <typename Visit>
void ForEachListEntry(std::string_view text, Visit visit) {
  size_t number = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view entry = TrimWhitespace(text.substr(0, comma));
    ++number;
    if (!entry.empty()) visit(entry, number);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
}

PvfsPortRule ReadPortRule(const PeerConfigSources& sources, std::vector<std::string>* errors) {
  PvfsPortRule rule;
  if (!sources.port_offset.empty()) {
    auto offset = ParsePortNumber(TrimWhitespace(sources.port_offset));
    if (offset) {
      rule.offset = *offset;
    } else {
      errors->push_back("LIMPWATCH_PEER_PORT_OFFSET='" + sources.port_offset + "' is not a number in 0-65535; using " +
                        std::to_string(kDefaultPeerPortOffset));
    }
  }
  ForEachListEntry(sources.alias_ports, [&](std::string_view entry, size_t number) {
    size_t equals = entry.find('=');
    auto port = equals == std::string_view::npos ? std::nullopt : ParsePortNumber(entry.substr(equals + 1));
    if (equals == 0 || !port || *port == 0) {
      errors->push_back("LIMPWATCH_PEER_PORTS entry " + std::to_string(number) + " '" + std::string(entry) +
                        "': expected <alias>=<port>");
      return;
    }
    rule.alias_ports.emplace_back(std::string(entry.substr(0, equals)), *port);
  });
  return rule;
}

void FindSelf(const PeerConfigSources& sources, bool from_peer_list, PeerConfig* config) {
  auto find = [&](const std::string& wanted) -> std::optional<size_t> {
    for (size_t i = 0; i < config->servers.size(); ++i) {
      const PeerEndpoint& server = config->servers[i];
      if (server.name == wanted) return i;
      if (from_peer_list && server.host + ":" + std::to_string(server.port) == wanted) return i;
    }
    return std::nullopt;
  };
  if (!sources.self.empty()) {
    config->self = find(sources.self);
    config->self_missing = !config->self;
    if (!config->self) {
      config->errors.push_back("LIMPWATCH_SELF='" + sources.self + "' names none of the " +
                               std::to_string(config->servers.size()) + " configured servers");
    }
    return;
  }
  if (!sources.node_name.empty()) config->self = find(sources.node_name);
  config->self_missing = !config->self && !config->servers.empty() && !config->bind_override;
  if (config->self_missing) {
    config->errors.push_back("cannot tell which configured server is this one: set LIMPWATCH_SELF" +
                             (sources.node_name.empty() ? std::string()
                                                        : " (LIMPWATCH_NAME='" + sources.node_name + "' matches none)"));
  }
}

ComparisonRing RingOf(const std::vector<PeerEndpoint>& servers) {
  std::vector<std::string> names, kinds;
  names.reserve(servers.size());
  kinds.reserve(servers.size());
  for (const PeerEndpoint& server : servers) {
    names.push_back(server.name);
    kinds.push_back(server.kind);
  }
  return ComparisonRing(names, kinds);
}

void ReadGroupSize(const PeerConfigSources& sources, PeerConfig* config) {
  std::string_view text = TrimWhitespace(sources.group_size);
  if (text.empty()) return;
  size_t size = 0;
  bool digits = text.size() <= 6 && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) size = std::stoul(std::string(text));
  if (!digits || size < kMinGroupSize || size > kMaxGroupSize || size % 2 != 0) {
    config->errors.push_back("LIMPWATCH_PEER_GROUP_SIZE='" + sources.group_size + "' is not an even number from " +
                             std::to_string(kMinGroupSize) + " to " + std::to_string(kMaxGroupSize) + "; using " +
                             std::to_string(kDefaultGroupSize));
    return;
  }
  config->group_size = size;
}

}  // namespace

PeerConfigSources PeerConfigSources::FromEnvironment() {
  PeerConfigSources sources;
  sources.peers = Variable("LIMPWATCH_PEERS");
  sources.peers_file = Variable("LIMPWATCH_PEERS_FILE");
  sources.pvfs_config = Variable("LIMPWATCH_PVFS_CONFIG");
  sources.self = Variable("LIMPWATCH_SELF");
  sources.node_name = Variable("LIMPWATCH_NAME");
  sources.port_offset = Variable("LIMPWATCH_PEER_PORT_OFFSET");
  sources.alias_ports = Variable("LIMPWATCH_PEER_PORTS");
  sources.bind = Variable("LIMPWATCH_PEER_BIND");
  sources.group_size = Variable("LIMPWATCH_PEER_GROUP_SIZE");
  return sources;
}

std::vector<size_t> PeerConfig::PeerIndexes() const {
  if (self) return RingOf(servers).GroupOf(*self, group_size);
  std::vector<size_t> everyone(servers.size());
  for (size_t index = 0; index < servers.size(); ++index) everyone[index] = index;
  return everyone;
}

std::vector<PeerEndpoint> PeerConfig::Peers() const {
  std::vector<PeerEndpoint> peers;
  for (size_t index : PeerIndexes()) {
    if (servers[index].resolved) peers.push_back(servers[index]);
  }
  return peers;
}

bool ResolvePeer(PeerEndpoint* peer, std::vector<std::string>* errors) {
  if (peer->resolved) return true;
  std::string error;
  auto address = ResolvePeerHost(peer->host, peer->port, &error);
  if (!address) {
    errors->push_back(peer->origin + ": " + error);
    return false;
  }
  peer->address = *address;
  peer->resolved = true;
  return true;
}

std::map<std::string, std::vector<std::string>> PeerConfig::Scorers() const {
  std::map<std::string, std::vector<std::string>> scorers;
  if (!self) return scorers;
  ComparisonRing ring = RingOf(servers);
  std::vector<size_t> judged = ring.GroupOf(*self, group_size);
  if (judged.size() + 1 >= servers.size()) return scorers;  // everyone compares everyone
  judged.push_back(*self);
  for (size_t server : judged) {
    std::vector<std::string>& names = scorers[servers[server].name];
    names.push_back(servers[server].name);
    for (size_t scorer : ring.GroupOf(server, group_size)) names.push_back(servers[scorer].name);
  }
  return scorers;
}

std::optional<PeerAddress> PeerConfig::BindAddress() const {
  if (bind_override) return bind_override;
  if (self && servers[*self].resolved) return servers[*self].address;
  return std::nullopt;
}

namespace {

// One "[name[@kind]=]host:port" entry; a bad one adds a line to *errors.
std::optional<PeerEndpoint> ParsePeerEntry(std::string_view entry, const std::string& origin,
                                           std::vector<std::string>* errors) {
  std::string name, kind;
  std::string_view address_text = entry;
  if (size_t equals = entry.find('='); equals != std::string_view::npos) {
    name = std::string(TrimWhitespace(entry.substr(0, equals)));
    address_text = TrimWhitespace(entry.substr(equals + 1));
    if (size_t at = name.find('@'); at != std::string::npos) {
      kind = std::string(TrimWhitespace(std::string_view(name).substr(at + 1)));
      name = std::string(TrimWhitespace(std::string_view(name).substr(0, at)));
      if (kind.empty()) {
        errors->push_back(origin + " '" + std::string(entry) + "': empty kind after '@'");
        return std::nullopt;
      }
    }
    if (name.empty()) {
      errors->push_back(origin + " '" + std::string(entry) + "': empty name before '='");
      return std::nullopt;
    }
  }
  std::string error;
  auto split = SplitHostPort(address_text, &error);
  if (split && split->port == 0) error = "port 0 in '" + std::string(address_text) + "'";
  if (!split || split->port == 0) {
    errors->push_back(origin + ": " + error);
    return std::nullopt;
  }
  if (name.empty()) name = std::string(address_text);
  auto numeric = PeerAddress::FromNumericHost(split->host, split->port);
  return PeerEndpoint{name, split->host, split->port, numeric.value_or(PeerAddress()), origin, kind, numeric.has_value()};
}

}  // namespace

std::vector<PeerEndpoint> ParsePeerList(std::string_view text, std::vector<std::string>* errors) {
  std::vector<PeerEndpoint> peers;
  ForEachListEntry(text, [&](std::string_view entry, size_t number) {
    auto peer = ParsePeerEntry(entry, "LIMPWATCH_PEERS entry " + std::to_string(number), errors);
    if (peer) peers.push_back(std::move(*peer));
  });
  return peers;
}

std::vector<PeerEndpoint> ParsePeerFile(const std::string& path, std::vector<std::string>* errors) {
  std::vector<PeerEndpoint> peers;
  std::ifstream file(path);
  if (!file) {
    errors->push_back("LIMPWATCH_PEERS_FILE='" + path + "' cannot be read: " + std::strerror(errno));
    return peers;
  }
  std::string line;
  for (size_t number = 1; std::getline(file, line); ++number) {
    std::string_view text = line;
    text = text.substr(0, text.find('#'));
    ForEachListEntry(text, [&](std::string_view entry, size_t) {
      auto peer = ParsePeerEntry(entry, path + ":" + std::to_string(number), errors);
      if (peer) peers.push_back(std::move(*peer));
    });
  }
  if (file.bad()) errors->push_back("LIMPWATCH_PEERS_FILE='" + path + "': read error: " + std::strerror(errno));
  return peers;
}

std::string PeerConfigFile(const PeerConfigSources& sources) {
  if (!sources.peers.empty()) return "";
  return !sources.peers_file.empty() ? sources.peers_file : sources.pvfs_config;
}

PeerConfig LoadPeerConfig(const PeerConfigSources& sources) {
  PeerConfig config;
  try {
    if (!sources.bind.empty()) {
      config.bind_override = PeerAddress::ParseNumeric(TrimWhitespace(sources.bind));
      if (!config.bind_override) {
        config.errors.push_back("LIMPWATCH_PEER_BIND='" + sources.bind +
                                "' is not a numeric <ip>:<port> or [<ipv6>]:<port>");
      }
    }
    bool from_peer_list = !sources.peers.empty() || !sources.peers_file.empty();
    if (from_peer_list) {
      std::string chosen = !sources.peers.empty() ? "LIMPWATCH_PEERS" : "LIMPWATCH_PEERS_FILE";
      if (!sources.peers.empty() && !sources.peers_file.empty()) {
        config.errors.push_back("both LIMPWATCH_PEERS and LIMPWATCH_PEERS_FILE are set; LIMPWATCH_PEERS_FILE='" +
                                sources.peers_file + "' is ignored");
      }
      if (!sources.pvfs_config.empty()) {
        config.errors.push_back("both " + chosen + " and LIMPWATCH_PVFS_CONFIG are set; LIMPWATCH_PVFS_CONFIG='" +
                                sources.pvfs_config + "' is ignored");
      }
      if (!sources.peers.empty()) {
        config.servers = ParsePeerList(sources.peers, &config.errors);
      } else {
        config.servers = ParsePeerFile(sources.peers_file, &config.errors);
      }
    } else if (!sources.pvfs_config.empty()) {
      PvfsPortRule rule = ReadPortRule(sources, &config.errors);
      config.servers = ParsePvfsAliases(sources.pvfs_config, rule, &config.errors);
    }
    config.source_file = PeerConfigFile(sources);
    ReadGroupSize(sources, &config);
    FindSelf(sources, from_peer_list, &config);
    if (!config.self_missing) {
      // This server's own address, and its group's: what it binds and sends
      // to (every server's, when which one is this is not known).
      std::vector<size_t> needed = config.PeerIndexes();
      if (config.self) needed.push_back(*config.self);
      for (size_t index : needed) ResolvePeer(&config.servers[index], &config.errors);
    }
  } catch (const std::exception& exception) {
    config.errors.push_back(std::string("peer configuration: ") + exception.what());
  }
  return config;
}

}  // namespace limpwatch::analyzer
