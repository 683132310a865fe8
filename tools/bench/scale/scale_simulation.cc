// Scale: N virtual servers in one process, with bounded comparison groups
// (comparison_group.h), the real wire encoding and authentication, the real
// diagnoser and verdict board, an in-memory network that drops, delays and
// partitions, and planted limping servers. For each N it prints what one
// server pays per window (datagrams, bytes, CPU), how long the planted server
// takes to be indicted by its scorers' majority, and the false alarms.
//
// Every server's summary is made and encoded every window. Every server's
// analyzer depends only on its group's datagrams, so the analyzers run are
// the planted servers' scorers and a sample of the others (--observers): a
// server's cost does not depend on which servers are run, and the false
// alarms are counted over (analyzers run x windows), stated in the report.
//
//   scale_simulation [--servers 100,1000,10000] [--group 64] [--windows 1000]
//                    [--fault-windows 60] [--limping 1] [--limp-ratio 4]
//                    [--observers 100] [--drop 0.05] [--delay 0.01]
//                    [--partition 0.1] [--partition-windows 30] [--seed 1]
//                    [--threads 2] [--churn 0] [--churn-spread 10]
//                    [--no-key] [--check]
//
// --churn K changes the membership half-way through the fault-free windows:
// K servers are taken out of the configuration and K new ones put in. Each
// server picks up the new list at its own window within --churn-spread
// windows (a file reaching the nodes one by one), recomputes its group and
// forgets the peers that left it (peer_membership.h); the new servers start
// with the new list, the ones taken out stop once every server has it.
//
// --check exits 1 unless, at every N, the groups are symmetric and every
// server is scored by the full group, every planted server is indicted by
// its scorers' majority, and no alarm falls on a server not planted (silent
// alarms across the partition aside).
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/comparison_group.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "limpwatch/shm/name_hash.h"
#include "scale/simulated_analyzer.h"
#include "scale/simulated_network.h"
#include "scale/synthetic_summaries.h"

namespace {

using namespace limpwatch;

struct Options {
  std::vector<int> servers = {100, 1000, 10000};
  size_t group = analyzer::kDefaultGroupSize;
  uint64_t windows = 1000;  // fault-free windows, after the servers' start-up
  uint64_t fault_windows = 60;
  int limping = 1;
  double limp_ratio = 4.0;  // the test-bed's slowed disk
  size_t observers = 100;
  double drop = 0;
  double delay = 0;
  double partition = 0;
  uint64_t partition_windows = 30;
  uint32_t seed = 1;
  int threads = 2;
  size_t churn = 0;
  uint64_t churn_spread = 10;
  bool key = true;
  bool check = false;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr, "scale_simulation: %s\n", problem.c_str());
  std::fprintf(stderr,
               "usage: scale_simulation [--servers N,N,...] [--group G] [--windows W] [--fault-windows F]\n"
               "       [--limping K] [--limp-ratio R] [--observers K] [--drop P] [--delay P]\n"
               "       [--partition SHARE] [--partition-windows W] [--seed S] [--threads T]\n"
               "       [--churn K] [--churn-spread W] [--no-key] [--check]\n");
  std::exit(2);
}

double Number(const char* flag, const char* text, double low, double high) {
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value >= low && value <= high)) {
    Usage(std::string(flag) + " wants a number in [" + std::to_string(low) + ", " + std::to_string(high) +
          "], not '" + text + "'");
  }
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int index = 1; index < argc; ++index) {
    std::string flag = argv[index];
    if (flag == "--no-key") {
      options.key = false;
      continue;
    }
    if (flag == "--check") {
      options.check = true;
      continue;
    }
    if (index + 1 >= argc) Usage(flag + " wants a value");
    const char* value = argv[++index];
    if (flag == "--servers") {
      options.servers.clear();
      std::stringstream list(value);
      std::string item;
      while (std::getline(list, item, ',')) options.servers.push_back(int(Number("--servers", item.c_str(), 5, 1e6)));
    } else if (flag == "--group") {
      options.group = size_t(Number("--group", value, analyzer::kMinGroupSize, analyzer::kMaxGroupSize));
      if (options.group % 2 != 0) Usage("--group wants an even number");
    } else if (flag == "--windows") {
      options.windows = uint64_t(Number("--windows", value, 1, 1e7));
    } else if (flag == "--fault-windows") {
      options.fault_windows = uint64_t(Number("--fault-windows", value, 0, 1e6));
    } else if (flag == "--limping") {
      options.limping = int(Number("--limping", value, 0, 100));
    } else if (flag == "--limp-ratio") {
      options.limp_ratio = Number("--limp-ratio", value, 1, 100);
    } else if (flag == "--observers") {
      options.observers = size_t(Number("--observers", value, 1, 1e6));
    } else if (flag == "--drop") {
      options.drop = Number("--drop", value, 0, 0.9);
    } else if (flag == "--delay") {
      options.delay = Number("--delay", value, 0, 0.9);
    } else if (flag == "--partition") {
      options.partition = Number("--partition", value, 0, 0.5);
    } else if (flag == "--partition-windows") {
      options.partition_windows = uint64_t(Number("--partition-windows", value, 0, 1e6));
    } else if (flag == "--seed") {
      options.seed = uint32_t(Number("--seed", value, 0, 4e9));
    } else if (flag == "--churn") {
      options.churn = size_t(Number("--churn", value, 0, 1e5));
    } else if (flag == "--churn-spread") {
      options.churn_spread = uint64_t(Number("--churn-spread", value, 0, 1000));
    } else if (flag == "--threads") {
      options.threads = int(Number("--threads", value, 1, 64));
    } else {
      Usage("unknown option '" + flag + "'");
    }
  }
  return options;
}

int64_t ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
}

double WallSeconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}

// Runs body(index) for index in [0, count) on `threads` threads.
template <typename Body>
void ParallelFor(size_t count, int threads, Body body) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t index = next++; index < count; index = next++) body(index);
  };
  std::vector<std::thread> pool;
  for (int thread = 1; thread < threads; ++thread) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
}

struct PlantedOutcome {
  std::string server;
  std::optional<uint64_t> first_alarm;  // windows after the limp began
  std::optional<uint64_t> majority;     // windows until more than half its scorers held it open
  std::map<std::string, int> resources;  // of the alarms raised on it
};

struct RunReport {
  int servers = 0;
  size_t group = 0;
  size_t observed = 0;
  size_t min_scorers = 0, max_scorers = 0;
  bool symmetric = true;
  double datagrams_out = 0, bytes_out = 0, datagrams_in = 0, bytes_in = 0;
  double encode_us = 0, analyze_us = 0;  // per server per window
  double analyze_us_p99 = 0;
  uint64_t analyzer_windows_fault_free = 0;
  uint64_t false_alarms = 0;            // anomaly, local or errors alarms on servers not planted
  std::set<std::string> falsely_accused;
  uint64_t majority_false = 0;          // windows x servers held open by a majority of their scorers, not planted
  uint64_t silent_across_partition = 0, silent_other = 0;
  uint64_t rejected = 0;
  size_t churned = 0;          // servers taken out, and as many put in
  uint64_t churn_window = 0;
  size_t groups_changed = 0;   // servers whose group changed
  double peers_moved = 0;      // peers joined per changed group, on average
  std::vector<PlantedOutcome> planted;
  double wall_s = 0;
  double ring_ms = 0;  // ordering the ring: what every server does once at start
};

RunReport Run(const Options& options, int servers) {
  RunReport report;
  report.servers = servers;
  report.group = std::min<size_t>(options.group, size_t(servers - 1));
  double started = WallSeconds();

  analyzer::AnalyzerConfig config;
  const uint64_t first_window = config.window_ticks;
  // Past the servers' start-up and the calibrated rule's baseline.
  const uint64_t settle_windows = 40;
  const uint64_t fault_from = first_window + settle_windows + options.windows;
  const uint64_t last_window = fault_from + options.fault_windows;
  const uint64_t partition_from = fault_from - options.partition_windows / 2;
  const uint64_t partition_until = partition_from + options.partition_windows;

  std::mt19937_64 random(options.seed * 7919 + uint64_t(servers));
  std::vector<size_t> everyone(servers);
  for (int index = 0; index < servers; ++index) everyone[index] = size_t(index);
  std::shuffle(everyone.begin(), everyone.end(), random);
  std::vector<size_t> limping(everyone.begin(), everyone.begin() + std::min(options.limping, servers));

  // Membership change: servers [servers, total) are put in, as many others taken out.
  const size_t churn = std::min(options.churn, size_t(servers) / 4);
  const int total = servers + int(churn);
  const uint64_t churn_at = first_window + settle_windows + options.windows / 2;
  const uint64_t churn_done = churn_at + options.churn_spread;  // every server has the new list
  std::vector<bool> taken_out(total, false);
  for (size_t index : everyone) {
    if (size_t(std::count(taken_out.begin(), taken_out.end(), true)) >= churn) break;
    if (std::find(limping.begin(), limping.end(), index) == limping.end()) taken_out[index] = true;
  }
  report.churned = churn;
  report.churn_window = churn_at;

  scale::SyntheticSpec spec;
  spec.servers = total;
  spec.seed = options.seed;
  spec.window_ticks = config.window_ticks;
  spec.limping = limping;
  spec.limp_ratio = options.limp_ratio;
  spec.limp_from_tick = fault_from;
  scale::SyntheticCluster cluster(spec);
  const std::vector<std::string>& names = cluster.names();

  // The groups every server computes from a list of `members`: by global index.
  auto groups_of = [&](const std::vector<size_t>& members, double* ring_ms) {
    std::vector<std::string> listed;
    for (size_t member : members) listed.push_back(names[member]);
    double ring_started = WallSeconds();
    analyzer::ComparisonRing ring(listed);
    if (ring_ms != nullptr) *ring_ms = (WallSeconds() - ring_started) * 1e3;
    std::vector<std::vector<size_t>> groups(total);
    for (size_t place = 0; place < members.size(); ++place) {
      for (size_t member : ring.GroupOf(place, report.group)) groups[members[place]].push_back(members[member]);
    }
    return groups;
  };
  std::vector<size_t> listed_before, listed_after;
  for (int index = 0; index < total; ++index) {
    if (index < servers) listed_before.push_back(size_t(index));
    if (!taken_out[index]) listed_after.push_back(size_t(index));
  }
  std::vector<std::vector<size_t>> groups_before = groups_of(listed_before, &report.ring_ms);
  std::vector<std::vector<size_t>> groups_after = churn > 0 ? groups_of(listed_after, nullptr) : groups_before;
  auto scorers_of = [&](const std::vector<std::vector<size_t>>& groups) {
    std::vector<size_t> scorers(total, 0);
    for (const auto& group : groups) {
      for (size_t member : group) ++scorers[member];
    }
    return scorers;
  };
  std::vector<size_t> scorers_before = scorers_of(groups_before), scorers_after = scorers_of(groups_after);
  const std::vector<size_t>& listed_last = churn > 0 ? listed_after : listed_before;
  report.min_scorers = report.max_scorers = scorers_after[listed_last.front()];
  for (size_t index : listed_last) {
    report.min_scorers = std::min(report.min_scorers, scorers_after[index]);
    report.max_scorers = std::max(report.max_scorers, scorers_after[index]);
    for (size_t member : groups_after[index]) {
      const auto& back = groups_after[member];
      if (std::find(back.begin(), back.end(), index) == back.end()) report.symmetric = false;
    }
    const auto& before = groups_before[index];
    size_t joined = 0;
    for (size_t member : groups_after[index]) joined += std::find(before.begin(), before.end(), member) == before.end();
    if (joined > 0 && index < size_t(servers)) {
      ++report.groups_changed;
      report.peers_moved += double(joined);
    }
  }
  if (report.groups_changed > 0) report.peers_moved /= double(report.groups_changed);

  // When each server picks up the new list (a hash of its name: the file
  // reaches the nodes one by one), while it runs, and whom it sends to then.
  std::vector<uint64_t> switch_window(total, UINT64_MAX);
  for (int index = 0; index < total && churn > 0; ++index) {
    switch_window[index] =
        index >= servers ? churn_at : churn_at + shm::FunctionNameHash(names[index]) % (options.churn_spread + 1);
  }
  auto running = [&](size_t index, uint64_t window) {
    if (index >= size_t(servers)) return window >= churn_at;
    return !taken_out[index] || window <= churn_done;
  };
  // A server taken out keeps sending to its last group until it stops, and
  // from its switch on compares nobody (peer_membership.h).
  auto group = [&](size_t index, uint64_t window) -> const std::vector<size_t>& {
    return window >= switch_window[index] && !taken_out[index] ? groups_after[index] : groups_before[index];
  };
  auto withdrawn = [&](size_t index, uint64_t window) { return taken_out[index] && window >= switch_window[index]; };

  // The analyzers run: the planted servers and their scorers, then others at random.
  std::vector<bool> observed(total, false);
  for (size_t planted : limping) {
    observed[planted] = true;
    for (size_t member : groups_before[planted]) observed[member] = true;
    for (size_t member : groups_after[planted]) observed[member] = true;
  }
  for (int index = servers; index < total; ++index) observed[index] = true;  // every new server
  size_t extra = 0;
  for (size_t index : everyone) {
    if (extra >= options.observers) break;
    if (!observed[index]) {
      observed[index] = true;
      ++extra;
    }
  }
  std::vector<size_t> observers;
  for (int index = 0; index < total; ++index) {
    if (observed[index]) observers.push_back(size_t(index));
  }
  report.observed = observers.size();

  scale::NetworkSpec network_spec;
  network_spec.seed = options.seed;
  network_spec.drop = options.drop;
  network_spec.delay = options.delay;
  network_spec.partitioned.assign(total, false);
  size_t cut_off = size_t(options.partition * servers);
  for (size_t index : everyone) {
    if (cut_off == 0) break;
    // Servers still running when it starts: not the planted ones, nor those taken out.
    if (std::find(limping.begin(), limping.end(), index) != limping.end() || taken_out[index]) continue;
    network_spec.partitioned[index] = true;
    --cut_off;
  }
  network_spec.partition_from = partition_from;
  network_spec.partition_until = options.partition > 0 ? partition_until : partition_from;
  scale::SimulatedNetwork network(network_spec);

  std::optional<analyzer::PeerKey> key;
  if (options.key) {
    std::vector<uint8_t> bytes(32);
    for (auto& byte : bytes) byte = uint8_t(random());
    std::string error;
    key = analyzer::PeerKey::FromBytes(bytes, &error);
  }
  const analyzer::PeerKey* key_pointer = key ? &*key : nullptr;

  analyzer::NameBook function_names;
  function_names.Add(cluster.functions());
  analyzer::ResourceManifest manifest;
  manifest.AddRule("dbpf_disk_wait_*", shm::Resource::kDisk);
  manifest.AddRule("pvfs_server_function_*", shm::Resource::kCpu);

  std::vector<std::unique_ptr<scale::SimulatedAnalyzer>> analyzers(total);
  for (size_t index : observers) {
    analyzers[index] =
        std::make_unique<scale::SimulatedAnalyzer>(names[index], config, manifest, &function_names, key_pointer);
  }
  std::vector<std::vector<uint8_t>> datagrams(total);
  std::vector<std::vector<std::vector<uint8_t>>> late(total);
  std::vector<std::vector<analyzer::Alarm>> raised(total);
  std::vector<int64_t> encode_ns(total, 0);
  std::vector<int64_t> analyze_ns(total, 0);
  std::vector<int64_t> analyze_window_ns(total, 0);
  std::vector<uint64_t> analyzed_windows(total, 0);
  std::vector<double> per_window_costs;  // an analyzer's CPU in one window, us
  uint64_t measured_windows = 0;
  double bytes_out_sum = 0;

  std::map<uint64_t, size_t> planted_by_hash;
  for (size_t planted : limping) {
    planted_by_hash[shm::FunctionNameHash(names[planted])] = report.planted.size();
    report.planted.push_back({names[planted], {}, {}, {}});
  }
  std::unordered_map<uint64_t, size_t> index_by_hash;
  for (int index = 0; index < total; ++index) index_by_hash[shm::FunctionNameHash(names[index])] = size_t(index);

  for (uint64_t tick = 1; tick <= last_window; ++tick) {
    cluster.NextTick();
    if (tick < first_window) continue;
    const uint64_t window = tick;
    ParallelFor(size_t(total), options.threads, [&](size_t index) {
      if (!running(index, window)) return;
      analyzer::PeerSummary summary = cluster.Summary(index);
      if (analyzers[index]) {
        summary.verdicts = analyzers[index]->OwnVerdicts();
      } else {
        summary.carries_verdicts = false;  // no analyzer run here: it says nothing
      }
      int64_t before = ThreadCpuNs();
      analyzer::EncodeSummary(summary, key_pointer, &datagrams[index]);
      encode_ns[index] += ThreadCpuNs() - before;
    });
    ParallelFor(observers.size(), options.threads, [&](size_t place) {
      size_t self = observers[place];
      raised[self].clear();
      if (!running(self, window)) return;
      scale::SimulatedAnalyzer& analyzer = *analyzers[self];
      int64_t before = ThreadCpuNs();
      if (window == switch_window[self] && self < size_t(servers)) {
        for (size_t member : groups_before[self]) {
          const auto& now = groups_after[self];
          if (std::find(now.begin(), now.end(), member) == now.end()) analyzer.Forget(names[member]);
        }
      }
      if (withdrawn(self, window)) {
        late[self].clear();
        return;
      }
      std::vector<std::vector<uint8_t>> arrived_late = std::move(late[self]);
      late[self].clear();
      for (const auto& datagram : arrived_late) analyzer.Receive(datagram);
      for (size_t member : group(self, window)) {
        // A member sends to this server while it runs and lists it, or
        // listed it before and still hears from it (a former peer,
        // peer_transport.h); this server lists it, or it would not be here.
        auto lists = [&](const std::vector<size_t>& members) {
          return std::find(members.begin(), members.end(), self) != members.end();
        };
        if (!running(member, window) || !(lists(group(member, window)) || lists(groups_before[member]))) continue;
        switch (network.Route(member, self, window)) {
          case scale::Delivery::kOnTime: analyzer.Receive(datagrams[member]); break;
          case scale::Delivery::kLate: late[self].push_back(datagrams[member]); break;
          case scale::Delivery::kLost: break;
        }
      }
      raised[self] = analyzer.Produce(datagrams[self], window);
      analyze_window_ns[self] = ThreadCpuNs() - before;
      analyze_ns[self] += analyze_window_ns[self];
      ++analyzed_windows[self];
    });
    ++measured_windows;
    for (int index = 0; index < total; ++index) {
      if (running(size_t(index), window)) {
        bytes_out_sum += double(datagrams[index].size()) * double(group(size_t(index), window).size());
      }
    }
    if (window % 10 == 0) {
      for (size_t self : observers) {
        if (running(self, window)) per_window_costs.push_back(double(analyze_window_ns[self]) / 1e3);
      }
    }

    // The alarms of this window, by kind and truth.
    for (size_t self : observers) {
      for (const analyzer::Alarm& alarm : raised[self]) {
        uint64_t hash = shm::FunctionNameHash(alarm.server);
        auto planted = planted_by_hash.find(hash);
        auto accused = index_by_hash.find(hash);
        if (alarm.kind == analyzer::AlarmKind::kSilent) {
          bool cut = accused != index_by_hash.end() &&
                     network_spec.partitioned[accused->second] != network_spec.partitioned[self] &&
                     alarm.window + config.peer_silence_windows + 2 >= partition_from &&
                     alarm.window < partition_until + config.peer_silence_windows + 2;
          (cut ? report.silent_across_partition : report.silent_other) += 1;
          continue;
        }
        if (planted != planted_by_hash.end() && alarm.window >= fault_from) {
          PlantedOutcome& outcome = report.planted[planted->second];
          if (!outcome.first_alarm) outcome.first_alarm = alarm.window - fault_from;
          ++outcome.resources[analyzer::ResourceName(alarm.resource)];
          continue;
        }
        ++report.false_alarms;
        report.falsely_accused.insert(alarm.server);
      }
    }
    // Majorities: a server whose open verdicts are held by more than half of its scorers.
    std::unordered_map<uint64_t, size_t> holders;
    for (size_t self : observers) {
      if (!running(self, window) || withdrawn(self, window)) continue;
      std::set<uint64_t> held;
      for (const analyzer::OpenVerdict& verdict : analyzers[self]->OwnVerdicts()) {
        if (verdict.kind != uint8_t(analyzer::AlarmKind::kSilent)) held.insert(verdict.server_hash);
      }
      for (uint64_t hash : held) ++holders[hash];
    }
    for (const auto& [hash, count] : holders) {
      auto accused = index_by_hash.find(hash);
      if (accused == index_by_hash.end()) continue;
      const std::vector<size_t>& scorers = window > churn_done ? scorers_after : scorers_before;
      bool majority = 2 * count > scorers[accused->second] + 1;  // its scorers and itself
      if (!majority) continue;
      auto planted = planted_by_hash.find(hash);
      if (planted != planted_by_hash.end() && window >= fault_from) {
        PlantedOutcome& outcome = report.planted[planted->second];
        if (!outcome.majority) outcome.majority = window - fault_from;
      } else {
        ++report.majority_false;
      }
    }
    if (window < fault_from && window >= first_window + settle_windows) {
      for (size_t self : observers) {
        report.analyzer_windows_fault_free += running(self, window) && !withdrawn(self, window);
      }
    }
  }

  double analyzer_windows = 0;
  for (size_t self : observers) {
    analyzer_windows += double(analyzed_windows[self]);
    const scale::AnalyzerCounts& counts = analyzers[self]->counts();
    report.datagrams_in += double(counts.datagrams_in);
    report.bytes_in += double(counts.bytes_in);
    report.rejected += counts.rejected;
    report.analyze_us += double(analyze_ns[self]) / 1e3;
  }
  report.datagrams_in /= analyzer_windows;
  report.bytes_in /= analyzer_windows;
  report.analyze_us /= analyzer_windows;
  int64_t encode_total = 0;
  for (int64_t ns : encode_ns) encode_total += ns;
  report.encode_us = double(encode_total) / 1e3 / double(servers) / double(measured_windows);
  double group_total = 0;
  for (size_t index : listed_last) group_total += double(groups_after[index].size());
  report.datagrams_out = group_total / double(listed_last.size());
  report.bytes_out = bytes_out_sum / servers / double(measured_windows);
  std::sort(per_window_costs.begin(), per_window_costs.end());
  if (!per_window_costs.empty()) report.analyze_us_p99 = per_window_costs[per_window_costs.size() * 99 / 100];
  report.wall_s = WallSeconds() - started;
  return report;
}

std::string Windows(const std::optional<uint64_t>& windows) {
  return windows ? std::to_string(*windows) : std::string("never");
}

void Print(const Options& options, const RunReport& report) {
  std::printf("\nN = %d servers, comparison group %zu, %zu analyzers run (%.1f s)\n", report.servers, report.group,
              report.observed, report.wall_s);
  std::printf("  groups: every server scored by %zu..%zu others, %s; the ring ordered in %.1f ms\n",
              report.min_scorers, report.max_scorers, report.symmetric ? "symmetric" : "NOT symmetric", report.ring_ms);
  std::printf("  per server per window: %.1f datagrams out, %.1f in; %.0f bytes out, %.0f in\n", report.datagrams_out,
              report.datagrams_in, report.bytes_out, report.bytes_in);
  std::printf("  per server per window: CPU %.1f us (encode %.1f us, receive and compare %.1f us; p99 %.0f us)\n",
              report.encode_us + report.analyze_us, report.encode_us, report.analyze_us, report.analyze_us_p99);
  std::printf("  fault-free: %llu analyzer-windows; false alarms %llu on %zu servers; majority false verdicts %llu\n",
              (unsigned long long)report.analyzer_windows_fault_free, (unsigned long long)report.false_alarms,
              report.falsely_accused.size(), (unsigned long long)report.majority_false);
  std::printf("  silent alarms: %llu across the partition, %llu otherwise; datagrams rejected %llu\n",
              (unsigned long long)report.silent_across_partition, (unsigned long long)report.silent_other,
              (unsigned long long)report.rejected);
  if (report.churned > 0) {
    std::printf("  churn at window %llu: %zu servers taken out, %zu put in; %zu groups changed, by %.1f peers each\n",
                (unsigned long long)report.churn_window, report.churned, report.churned, report.groups_changed,
                report.peers_moved);
  }
  for (const PlantedOutcome& outcome : report.planted) {
    std::string resources;
    for (const auto& [resource, count] : outcome.resources) {
      resources += (resources.empty() ? "" : ", ") + resource + " " + std::to_string(count);
    }
    std::printf("  planted %s (%.1fx): first alarm after %s windows, its scorers' majority after %s (alarms: %s)\n",
                outcome.server.c_str(), options.limp_ratio, Windows(outcome.first_alarm).c_str(),
                Windows(outcome.majority).c_str(), resources.empty() ? "none" : resources.c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  std::printf("scale simulation: %llu fault-free windows, then %llu with %d server(s) limping %.1fx; "
              "drop %.0f %%, delay %.0f %%, partition of %.0f %% for %llu windows around the fault's start; %s\n",
              (unsigned long long)options.windows, (unsigned long long)options.fault_windows, options.limping,
              options.limp_ratio, options.drop * 100, options.delay * 100, options.partition * 100,
              (unsigned long long)options.partition_windows, options.key ? "authenticated" : "no key");
  std::vector<RunReport> reports;
  for (int servers : options.servers) {
    reports.push_back(Run(options, servers));
    Print(options, reports.back());
  }
  std::printf("\n%8s %6s %10s %10s %10s %9s %10s %10s %8s\n", "servers", "group", "dgrams/w", "bytes/w", "CPU us/w",
              "indicted", "majority", "false", "silent*");
  for (const RunReport& report : reports) {
    std::string first = report.planted.empty() ? "-" : Windows(report.planted.front().first_alarm);
    std::string majority = report.planted.empty() ? "-" : Windows(report.planted.front().majority);
    std::printf("%8d %6zu %10.1f %10.0f %10.1f %9s %10s %10llu %8llu\n", report.servers, report.group,
                report.datagrams_out + report.datagrams_in, report.bytes_out + report.bytes_in,
                report.encode_us + report.analyze_us, first.c_str(), majority.c_str(),
                (unsigned long long)report.false_alarms, (unsigned long long)report.silent_other);
  }
  std::printf("(dgrams, bytes: out + in; indicted / majority: windows after the limp began; "
              "false: alarms on servers not planted; silent*: silent alarms not explained by the partition)\n");
  if (!options.check) return 0;
  std::vector<std::string> failures;
  for (const RunReport& report : reports) {
    std::string at = "N = " + std::to_string(report.servers) + ": ";
    if (!report.symmetric || report.min_scorers != report.group || report.max_scorers != report.group) {
      failures.push_back(at + "groups not symmetric, or a server not scored by the whole group");
    }
    for (const PlantedOutcome& outcome : report.planted) {
      if (!outcome.majority) failures.push_back(at + outcome.server + " never indicted by its scorers' majority");
    }
    if (report.false_alarms + report.majority_false + report.silent_other != 0) {
      failures.push_back(at + std::to_string(report.false_alarms + report.silent_other) +
                         " alarms on servers not planted");
    }
    if (report.rejected != 0) failures.push_back(at + std::to_string(report.rejected) + " datagrams rejected");
  }
  for (const std::string& failure : failures) std::printf("CHECK FAILED: %s\n", failure.c_str());
  return failures.empty() ? 0 : 1;
}
