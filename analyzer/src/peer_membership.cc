#include "limpwatch/analyzer/peer_membership.h"

#include <sys/stat.h>

#include <algorithm>
#include <map>

namespace limpwatch::analyzer {
namespace {

std::string NameList(const std::vector<std::string>& names) {
  constexpr size_t kNamed = 8;
  std::string text;
  for (size_t i = 0; i < names.size() && i < kNamed; ++i) text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kNamed) text += ", and " + std::to_string(names.size() - kNamed) + " more";
  return text;
}

void CompareGroups(const PeerConfig& before, const PeerConfig& after, MembershipChange* change) {
  std::map<std::string, PeerAddress> old_peers;
  for (const PeerEndpoint& peer : before.Peers()) old_peers.emplace(peer.name, peer.address);
  for (const PeerEndpoint& peer : after.Peers()) {
    auto found = old_peers.find(peer.name);
    if (found == old_peers.end()) {
      change->joined.push_back(peer.name);
      continue;
    }
    if (!(found->second == peer.address)) change->moved.push_back(peer.name);
    old_peers.erase(found);
  }
  for (const auto& [name, address] : old_peers) change->left.push_back(name);
}

}  // namespace

FileStamp StampOf(const std::string& path) {
  FileStamp stamp;
  struct stat status {};
  if (path.empty() || stat(path.c_str(), &status) != 0) return stamp;
  stamp.exists = true;
  stamp.device = status.st_dev;
  stamp.inode = status.st_ino;
  stamp.size = status.st_size;
  stamp.modified_ns = int64_t{status.st_mtim.tv_sec} * 1'000'000'000 + status.st_mtim.tv_nsec;
  return stamp;
}

std::string MembershipChange::Describe(size_t peers) const {
  std::string line = "peer configuration " + file + " changed: " + std::to_string(servers_after) + " servers (" +
                     std::to_string(servers_before) + " before)";
  if (withdrawn) {
    return line + ", and this server is not among them: it compares nobody from now on, and keeps sending its "
                  "summaries to its " + std::to_string(peers) + " peers until it stops or is put back";
  }
  if (!applied) {
    line += ", not used: " + (problems.empty() ? std::string("rejected") : problems.front());
    if (problems.size() > 1) line += " (and " + std::to_string(problems.size() - 1) + " more problems)";
    line += "; keeping the previous " + std::to_string(servers_before) +
            " servers until the file changes again";
    return line;
  }
  if (joined.empty() && left.empty() && moved.empty()) return line + "; this server's peers are the same";
  if (!joined.empty()) line += "; peers joined: " + NameList(joined);
  if (!left.empty()) line += "; peers left: " + NameList(left);
  if (!moved.empty()) line += "; peers at a new address: " + NameList(moved);
  return line;
}

PeerMembership::PeerMembership(PeerConfigSources sources, FileStamp stamp, PeerConfig config)
    : sources_(std::move(sources)), stamp_(stamp), config_(std::move(config)) {}

PeerMembership PeerMembership::Load(PeerConfigSources sources) {
  // Stamped first: a change while the file is read is seen at the next check.
  FileStamp stamp = StampOf(PeerConfigFile(sources));
  PeerConfig config = LoadPeerConfig(sources);
  return PeerMembership(std::move(sources), stamp, std::move(config));
}

std::optional<MembershipChange> PeerMembership::Recheck(const Apply& apply) {
  std::string file = PeerConfigFile(sources_);
  if (file.empty()) return std::nullopt;
  FileStamp stamp = StampOf(file);
  if (stamp == stamp_) return std::nullopt;
  stamp_ = stamp;
  MembershipChange change;
  change.file = file;
  change.servers_before = config_.servers.size();
  PeerConfig reread = LoadPeerConfig(sources_);
  change.servers_after = reread.servers.size();
  change.problems = reread.errors;
  if (reread.self_missing && change.problems.size() == 1) {
    change.withdrawn = true;
    change.problems.clear();
    return change;
  }
  if (change.problems.empty() && !reread.self) change.problems.push_back("this server is not among them");
  if (change.problems.empty() && reread.BindAddress() != config_.BindAddress()) {
    change.problems.push_back("this server's own address changed from " + config_.BindAddress()->ToString() + " to " +
                              reread.BindAddress()->ToString() + ", which only a restart can bind");
  }
  std::string refused;
  if (change.problems.empty() && !apply(reread, &refused)) change.problems.push_back(refused);
  if (!change.problems.empty()) return change;
  CompareGroups(config_, reread, &change);
  change.applied = true;
  config_ = std::move(reread);
  return change;
}

}  // namespace limpwatch::analyzer
