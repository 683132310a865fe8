// Membership that changes: the file the servers were read from
// (LIMPWATCH_PEERS_FILE or LIMPWATCH_PVFS_CONFIG) is checked once a tick and
// read again when it changed (its inode, size or modification time), so
// servers added to or removed from the cluster's configuration are picked up
// without a restart. Every server recomputes its comparison group from the
// new list the same way (comparison_group.h), so the groups agree again once
// every server has the new file.
//
// A re-read is used only when it is clean: no error line (a file cut short
// while it is written, a host that does not resolve, this server missing
// from it). Otherwise the previous configuration stays and the problems are
// reported; the file is read again at its next change. Writing the new file
// beside the old one and renaming it over it makes the change atomic.
//
// A clean file without this server takes it out of the cluster: it is being
// retired. It then compares nobody (its analyzer forgets every peer), and
// keeps sending its summaries to the peers of its last configuration until
// it stops, so that the servers the new file has not reached yet do not see
// it fall silent. Put back in the file, it joins again.
//
// LIMPWATCH_PEERS, an environment variable, cannot change: it is not watched.
#ifndef LIMPWATCH_ANALYZER_PEER_MEMBERSHIP_H_
#define LIMPWATCH_ANALYZER_PEER_MEMBERSHIP_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "limpwatch/analyzer/peer_config.h"

namespace limpwatch::analyzer {

// What tells that a file changed without reading it.
struct FileStamp {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t modified_ns = 0;
  bool operator==(const FileStamp&) const = default;
};

FileStamp StampOf(const std::string& path);

struct MembershipChange {
  std::string file;
  bool applied = false;
  bool withdrawn = false;              // a clean list without this server (not applied)
  size_t servers_before = 0;
  size_t servers_after = 0;            // as read, whether applied or not
  std::vector<std::string> joined;     // peers this server now exchanges with, and did not before
  std::vector<std::string> left;       // peers it no longer exchanges with
  std::vector<std::string> moved;      // peers that stayed at a new address
  std::vector<std::string> problems;   // why it was not applied
  // One line for the log; `peers` is how many this server sends to.
  std::string Describe(size_t peers = 0) const;
};

class PeerMembership {
 public:
  // Stamps the watched file, then reads the configuration.
  static PeerMembership Load(PeerConfigSources sources);

  // The configuration in use.
  const PeerConfig& config() const { return config_; }
  // The file whose changes are picked up; "" when none is (LIMPWATCH_PEERS).
  const std::string& watched() const { return config_.source_file; }

  // When the watched file changed since it was last read: reads it again
  // and, when the result is clean and `apply` accepts it (false with a
  // reason in *error), makes it the configuration in use. nullopt when the
  // file did not change.
  using Apply = std::function<bool(const PeerConfig& config, std::string* error)>;
  std::optional<MembershipChange> Recheck(const Apply& apply);

 private:
  PeerMembership(PeerConfigSources sources, FileStamp stamp, PeerConfig config);

  PeerConfigSources sources_;
  FileStamp stamp_;  // of the watched file when it was last read
  PeerConfig config_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_PEER_MEMBERSHIP_H_
