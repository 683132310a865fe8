#include "limpwatch/analyzer/comparison_group.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

// The servers of each ring: kinds large enough for a group of their own,
// then the others together.
std::vector<std::vector<size_t>> Pools(size_t count, const std::vector<std::string>& kinds) {
  if (kinds.size() != count) {
    std::vector<size_t> everyone(count);
    for (size_t i = 0; i < count; ++i) everyone[i] = i;
    return {everyone};
  }
  std::map<std::string, std::vector<size_t>> by_kind;
  for (size_t i = 0; i < count; ++i) by_kind[kinds[i]].push_back(i);
  std::vector<std::vector<size_t>> pools;
  std::vector<size_t> mixed;
  for (auto& [kind, members] : by_kind) {
    if (members.size() > kMinGroupSize) {
      pools.push_back(std::move(members));
    } else {
      mixed.insert(mixed.end(), members.begin(), members.end());
    }
  }
  if (mixed.size() > kMinGroupSize || pools.empty()) {
    if (!mixed.empty()) pools.push_back(std::move(mixed));
  } else if (!mixed.empty()) {
    auto largest = std::max_element(pools.begin(), pools.end(),
                                     [](const auto& a, const auto& b) { return a.size() < b.size(); });
    largest->insert(largest->end(), mixed.begin(), mixed.end());
  }
  return pools;
}

}  // namespace

ComparisonRing::ComparisonRing(const std::vector<std::string>& servers, const std::vector<std::string>& kinds)
    : ring_of_(servers.size()), position_(servers.size()) {
  // By name hash, the name itself breaking a tie, so that every server
  // sorts the same set the same way.
  std::vector<uint64_t> hashes(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) hashes[i] = shm::FunctionNameHash(servers[i]);
  rings_ = Pools(servers.size(), kinds);
  for (size_t ring = 0; ring < rings_.size(); ++ring) {
    std::vector<size_t>& order = rings_[ring];
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return hashes[a] != hashes[b] ? hashes[a] < hashes[b] : servers[a] < servers[b];
    });
    for (size_t place = 0; place < order.size(); ++place) {
      ring_of_[order[place]] = ring;
      position_[order[place]] = place;
    }
  }
}

size_t ComparisonRing::RingSize(size_t self) const {
  return self < ring_of_.size() ? rings_[ring_of_[self]].size() : 0;
}

std::vector<size_t> ComparisonRing::GroupOf(size_t self, size_t size) const {
  std::vector<size_t> group;
  if (self >= ring_of_.size()) return group;
  const std::vector<size_t>& order = rings_[ring_of_[self]];
  size_t count = order.size();
  size_t position = position_[self];
  if (count - 1 <= size) {
    for (size_t step = 1; step < count; ++step) group.push_back(order[(position + step) % count]);
    std::sort(group.begin(), group.end());
    return group;
  }
  size_t half = size / 2;
  for (size_t step = half; step >= 1; --step) group.push_back(order[(position + count - step) % count]);
  for (size_t step = 1; step <= half; ++step) group.push_back(order[(position + step) % count]);
  return group;
}

std::vector<size_t> ComparisonGroup(const std::vector<std::string>& servers, size_t self, size_t size,
                                    const std::vector<std::string>& kinds) {
  if (self >= servers.size()) return {};
  return ComparisonRing(servers, kinds).GroupOf(self, size);
}

}  // namespace limpwatch::analyzer
