#include "limpwatch/analyzer/comparison_group.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {

std::vector<size_t> ComparisonGroup(const std::vector<std::string>& servers, size_t self, size_t size) {
  size_t count = servers.size();
  std::vector<size_t> group;
  if (self >= count) return group;
  if (count - 1 <= size) {
    for (size_t i = 0; i < count; ++i) {
      if (i != self) group.push_back(i);
    }
    return group;
  }
  // The ring: by name hash, the name itself breaking a tie, so that every
  // server sorts the same set the same way.
  std::vector<size_t> ring(count);
  std::iota(ring.begin(), ring.end(), size_t{0});
  std::vector<uint64_t> hashes(count);
  for (size_t i = 0; i < count; ++i) hashes[i] = shm::FunctionNameHash(servers[i]);
  std::sort(ring.begin(), ring.end(), [&](size_t a, size_t b) {
    return hashes[a] != hashes[b] ? hashes[a] < hashes[b] : servers[a] < servers[b];
  });
  size_t position = size_t(std::find(ring.begin(), ring.end(), self) - ring.begin());
  size_t half = size / 2;
  for (size_t step = half; step >= 1; --step) group.push_back(ring[(position + count - step) % count]);
  for (size_t step = 1; step <= half; ++step) group.push_back(ring[(position + step) % count]);
  return group;
}

}  // namespace limpwatch::analyzer
