// The in-memory network between the simulated servers: each datagram is
// delivered in its window, one window late, or lost, by a draw that depends
// only on (seed, sender, receiver, window), so that the same run gives the
// same deliveries whatever order or thread routes them. A partition cuts a
// set of servers off from the rest (both ways) for a range of windows.
#ifndef LIMPWATCH_TOOLS_BENCH_SCALE_SIMULATED_NETWORK_H_
#define LIMPWATCH_TOOLS_BENCH_SCALE_SIMULATED_NETWORK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace limpwatch::scale {

enum class Delivery { kOnTime, kLate, kLost };

struct NetworkSpec {
  uint64_t seed = 1;
  double drop = 0;   // share of datagrams lost
  double delay = 0;  // share delivered one window late
  std::vector<bool> partitioned;  // by server: on the cut-off side
  uint64_t partition_from = 0;    // windows [from, until)
  uint64_t partition_until = 0;
};

class SimulatedNetwork {
 public:
  explicit SimulatedNetwork(NetworkSpec spec) : spec_(std::move(spec)) {}

  Delivery Route(size_t from, size_t to, uint64_t window) const;
  // Whether the partition separated `a` and `b` in `window`.
  bool Separated(size_t a, size_t b, uint64_t window) const;
  bool Partitioned(size_t server) const { return server < spec_.partitioned.size() && spec_.partitioned[server]; }

 private:
  NetworkSpec spec_;
};

}  // namespace limpwatch::scale

#endif  // LIMPWATCH_TOOLS_BENCH_SCALE_SIMULATED_NETWORK_H_
