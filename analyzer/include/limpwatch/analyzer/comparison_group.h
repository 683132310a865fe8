// Bounded fan-out: the servers each server sends its summaries to and
// compares itself with, so that a server's cost stays flat however large
// the cluster (seed 000 compares every server with every other; at 1,000
// servers that is 1,000 datagrams in and out a second per server).
//
// Every server is placed on a ring by the hash of its name; its group is the
// `size` servers nearest it there, size/2 on either side. The choice is
//   - the same on every server without coordination: a function of the set
//     of names alone, whatever order a configuration lists them in;
//   - symmetric: a is in b's group exactly when b is in a's, so the servers
//     a server sends to are the ones that compare it, and each server is
//     compared by `size` others (all the others in a smaller cluster);
//   - connected: neighbouring groups share all but one member;
//   - stable: a server added or removed changes the groups of only the
//     `size` servers nearest it on the ring, never the others'.
// `size` is even (a window of size/2 on each side); at least 4, so that a
// server is judged by 4 peers and a group has a majority to agree with.
//
// Servers of different kinds do different work (a PVFS metadata-only server
// next to I/O servers): each kind with more than kMinGroupSize servers is a
// ring of its own, so its servers are compared only with one another. The
// servers of smaller kinds share one ring (joined to the largest ring when
// they are too few even together): a lone server of its kind has no peer of
// its kind to be compared with, and is still compared with someone.
#ifndef LIMPWATCH_ANALYZER_COMPARISON_GROUP_H_
#define LIMPWATCH_ANALYZER_COMPARISON_GROUP_H_

#include <cstddef>
#include <string>
#include <vector>

namespace limpwatch::analyzer {

inline constexpr size_t kDefaultGroupSize = 64;
inline constexpr size_t kMinGroupSize = 4;
inline constexpr size_t kMaxGroupSize = 1024;

// The ring of a cluster's servers, ordered once: a simulation or a test that
// asks for every server's group pays for one sort, not one per server.
class ComparisonRing {
 public:
  // `kinds`: each server's kind ("" for none), or empty when none has one.
  explicit ComparisonRing(const std::vector<std::string>& servers, const std::vector<std::string>& kinds = {});
  // Indices into `servers`: the group of servers[self], in ring order (empty
  // when self is out of range; every other server of its ring, in index
  // order, when the ring holds at most size + 1).
  std::vector<size_t> GroupOf(size_t self, size_t size) const;
  // How many servers share servers[self]'s ring.
  size_t RingSize(size_t self) const;

 private:
  std::vector<std::vector<size_t>> rings_;  // server indices, in ring order
  std::vector<size_t> ring_of_;             // by server index: its ring
  std::vector<size_t> position_;            // by server index: its place in its ring
};

// The indices into `servers` (every server of the cluster, names unique) of
// the group of servers[self], self left out: ComparisonRing(servers,
// kinds).GroupOf(self, size), for one server.
std::vector<size_t> ComparisonGroup(const std::vector<std::string>& servers, size_t self, size_t size,
                                    const std::vector<std::string>& kinds = {});

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_COMPARISON_GROUP_H_
