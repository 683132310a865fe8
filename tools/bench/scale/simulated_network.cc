#include "scale/simulated_network.h"

namespace limpwatch::scale {
namespace {

// SplitMix64's finaliser: a well-mixed 64-bit draw from a counter.
uint64_t Mix(uint64_t value) {
  value += 0x9E3779B97F4A7C15ull;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

}  // namespace

bool SimulatedNetwork::Separated(size_t a, size_t b, uint64_t window) const {
  if (window < spec_.partition_from || window >= spec_.partition_until) return false;
  return Partitioned(a) != Partitioned(b);
}

Delivery SimulatedNetwork::Route(size_t from, size_t to, uint64_t window) const {
  if (Separated(from, to, window)) return Delivery::kLost;
  uint64_t draw = Mix(Mix(Mix(spec_.seed ^ window) ^ uint64_t(from)) ^ (uint64_t(to) << 32));
  double uniform = double(draw >> 11) * 0x1.0p-53;
  if (uniform < spec_.drop) return Delivery::kLost;
  if (uniform < spec_.drop + spec_.delay) return Delivery::kLate;
  return Delivery::kOnTime;
}

}  // namespace limpwatch::scale
