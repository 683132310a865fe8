// The decision suite: how the calibrated decision does on generated clusters
// whose truth is known (generated_cluster.h), beside today's seed rule.
//
//   decision_suite [--server-days N] [--reps N] [--quick] [--seed N] [--no-seed-rule]
//
// 1. False alarms: healthy clusters of 8 peers, one of them faster than the
//    rest and one carrying 1.4x the load (and so 1.2x slower), for N
//    server-days per noise model and tick: false alarms per 100 server-days,
//    and whether the fast or the hot peer was ever named.
// 2. Limps: one peer 1.2x, 1.5x, 2x or 5x slower, persistently or half the
//    time, from 10 minutes (1 s ticks) or 1 hour (15 s ticks) into the run:
//    found or not, time to indict (median / max, within 4 hours at 1 s ticks
//    or a day at 15 s), other peers named; and the seed rule over the same
//    clusters' first half hour (1 s) or 12 hours (15 s).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "generated_cluster.h"
#include "limpwatch/analyzer/series_diagnosis.h"
#include "seed_rule_series.h"

namespace limpwatch::decision {
namespace {

struct Options {
  double server_days = 100;
  int reps = 3;
  bool quick = false;
  uint32_t seed = 1;
  bool seed_rule = true;
};

std::vector<analyzer::DecisionMetric> Columns() {
  return {{"latency", analyzer::EvidenceKind::kLevel, shm::Resource::kDisk, 0},
          {"throughput", analyzer::EvidenceKind::kLoad, shm::Resource::kUnknown, 0}};
}

analyzer::SeriesSettings SeriesFor(double tick_s) {
  analyzer::SeriesSettings settings;
  settings.tick_s = tick_s;
  return settings;
}

struct RunResult {
  std::vector<uint64_t> alarms;   // per peer
  int64_t first_indicted_tick = -1;  // of the limping peer, at or after the limp's start
  double seconds = 0;              // CPU of the run
};

RunResult Run(const ClusterSpec& spec, uint64_t ticks) {
  auto started = std::chrono::steady_clock::now();
  GeneratedCluster cluster(spec);
  analyzer::SeriesDiagnosis diagnosis(SeriesFor(spec.tick_s), analyzer::DecisionSettings{}, Columns());
  RunResult result;
  result.alarms.assign(spec.servers, 0);
  std::vector<double> latency, throughput;
  std::vector<std::vector<double>> rows(spec.servers, std::vector<double>(2));
  for (uint64_t tick = 0; tick < ticks; ++tick) {
    cluster.Next(&latency, &throughput);
    for (int peer = 0; peer < spec.servers; ++peer) rows[peer] = {latency[peer], throughput[peer]};
    for (const analyzer::Alarm& alarm : diagnosis.AddTick(tick, cluster.names(), rows)) {
      int peer = std::atoi(alarm.server.c_str() + 4);
      ++result.alarms[peer];
      if (peer == spec.limping && tick >= spec.limp_start && result.first_indicted_tick < 0) {
        result.first_indicted_tick = int64_t(tick);
        if (spec.limping >= 0) break;  // found: the rest of the run says nothing more
      }
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

std::string Duration(double seconds) {
  char text[32];
  if (seconds < 120) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (seconds < 7200) {
    std::snprintf(text, sizeof text, "%.1f min", seconds / 60);
  } else {
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  }
  return text;
}

void FalseAlarms(const Options& options) {
  std::printf("\n## False alarms: healthy clusters of 8 peers (peer1 0.6x its peers, peer2 carrying 1.4x the load)\n\n");
  std::printf("| noise | tick | server-days | calibrated: false alarms | per 100 server-days | fast peer named | hot peer named |");
  if (options.seed_rule) std::printf(" seed rule: per 100 server-days (over %.1f server-days) |", options.server_days / 50);
  std::printf("\n|---|---|---|---|---|---|---|%s\n", options.seed_rule ? "---|" : "");
  for (double tick_s : {1.0, 15.0}) {
    for (NoiseModel noise : {NoiseModel::kGaussian, NoiseModel::kLogNormal, NoiseModel::kBursty}) {
      ClusterSpec spec;
      spec.servers = 8;
      spec.tick_s = tick_s;
      spec.noise = noise;
      spec.fast = 1;
      spec.hot = 2;
      uint64_t total_alarms = 0, fast = 0, hot = 0;
      double days = 0;
      // Several clusters, each a few days long, to the budget's server-days.
      int clusters = 0;
      while (days < options.server_days) {
        spec.seed = options.seed + 1000 * clusters++;
        double cluster_days = std::min(options.server_days - days, 8.0 * (tick_s >= 15 ? 20.0 : 2.0));
        uint64_t ticks = uint64_t(cluster_days / spec.servers * 86400.0 / tick_s);
        RunResult run = Run(spec, ticks);
        for (uint64_t alarms : run.alarms) total_alarms += alarms;
        fast += run.alarms[1];
        hot += run.alarms[2];
        days += double(ticks) * tick_s * spec.servers / 86400.0;
      }
      std::printf("| %s | %.0f s | %.0f | %llu | %.2f | %llu | %llu |", NoiseModelName(noise), tick_s, days,
                  (unsigned long long)total_alarms, 100.0 * double(total_alarms) / days, (unsigned long long)fast,
                  (unsigned long long)hot);
      if (options.seed_rule) {
        spec.seed = options.seed;
        uint64_t ticks = uint64_t(options.server_days / 50 / spec.servers * 86400.0 / tick_s);
        SeedRuleCount seed = RunSeedRule(spec, ticks);
        std::printf(" %.0f (%llu alarms, fast peer %llu) |", 100.0 * double(seed.alarms) / seed.server_days,
                    (unsigned long long)seed.alarms, (unsigned long long)seed.alarms_by_peer[1]);
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
}

void Limps(const Options& options) {
  std::printf("\n## Limps: one peer slower from a tick on (time to indict from that tick)\n\n");
  std::printf("| noise | tick | peers | limp | pattern | found | time to indict, median / max | other peers named |");
  if (options.seed_rule) std::printf(" seed rule: found | median time | other peers named |");
  std::printf("\n|---|---|---|---|---|---|---|---|%s\n", options.seed_rule ? "---|---|---|" : "");
  struct Case {
    int servers;
    double ratio;
    bool intermittent;
  };
  std::vector<Case> cases;
  for (double ratio : {1.2, 1.5, 2.0, 5.0}) {
    for (bool intermittent : {false, true}) cases.push_back({8, ratio, intermittent});
  }
  for (int servers : {4, 16, 64}) {
    if (options.quick && servers > 16) continue;
    cases.push_back({servers, 1.2, false});
    cases.push_back({servers, 2.0, true});
  }
  for (double tick_s : {1.0, 15.0}) {
    for (NoiseModel noise : {NoiseModel::kGaussian, NoiseModel::kLogNormal, NoiseModel::kBursty}) {
      for (const Case& item : cases) {
        std::vector<double> times, seed_times;
        int found = 0, runs = 0, seed_found = 0;
        uint64_t others = 0, seed_others = 0;
        for (int rep = 0; rep < options.reps; ++rep) {
          ClusterSpec spec;
          spec.servers = item.servers;
          spec.tick_s = tick_s;
          spec.noise = noise;
          spec.seed = options.seed + 17 * rep + 1;
          spec.limping = 1 + rep % (item.servers - 1);
          spec.limp_ratio = item.ratio;
          spec.fast = 0;
          spec.limp_start = uint64_t((tick_s >= 15 ? 3600.0 : 600.0) / tick_s);
          spec.intermittent_ticks = item.intermittent ? uint64_t((tick_s >= 15 ? 1800.0 : 120.0) / tick_s) : 0;
          uint64_t horizon = uint64_t((tick_s >= 15 ? 24 * 3600.0 : 4 * 3600.0) / tick_s);
          RunResult run = Run(spec, spec.limp_start + horizon);
          ++runs;
          for (int peer = 0; peer < item.servers; ++peer) {
            if (peer != spec.limping) others += run.alarms[peer];
          }
          if (run.first_indicted_tick >= 0) {
            ++found;
            times.push_back(double(uint64_t(run.first_indicted_tick) - spec.limp_start + 1) * tick_s);
          }
          if (options.seed_rule) {
            // Today's rule over the same cluster, the limp's first half hour
            // (1 s ticks) or 12 hours (15 s).
            uint64_t seed_horizon = std::min<uint64_t>(horizon, uint64_t((tick_s >= 15 ? 12 * 3600.0 : 1800.0) / tick_s));
            SeedRuleCount seed = RunSeedRule(spec, spec.limp_start + seed_horizon);
            if (seed.seconds_to_indict >= 0) {
              ++seed_found;
              seed_times.push_back(seed.seconds_to_indict);
            }
            for (int peer = 0; peer < item.servers; ++peer) {
              if (peer != spec.limping) seed_others += seed.alarms_by_peer[peer];
            }
          }
        }
        std::sort(times.begin(), times.end());
        double median = times.empty() ? 0
                        : times.size() % 2 ? times[times.size() / 2]
                                           : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
        std::string timing = times.empty() ? "-" : Duration(median) + " / " + Duration(times.back());
        std::printf("| %s | %.0f s | %d | %.1fx | %s | %d/%d | %s | %llu |", NoiseModelName(noise), tick_s, item.servers,
                    item.ratio, item.intermittent ? "half the time" : "persistent", found, runs, timing.c_str(),
                    (unsigned long long)others);
        if (options.seed_rule) {
          std::sort(seed_times.begin(), seed_times.end());
          std::printf(" %d/%d | %s | %llu |", seed_found, runs,
                      seed_times.empty() ? "-" : Duration(seed_times[seed_times.size() / 2]).c_str(),
                      (unsigned long long)seed_others);
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
}

int Usage(const char* problem) {
  std::fprintf(stderr, "decision_suite: %s\nusage: decision_suite [--server-days N] [--reps N] [--quick] [--seed N] [--no-seed-rule]\n",
               problem);
  return 2;
}

}  // namespace
}  // namespace limpwatch::decision

int main(int argc, char** argv) {
  using namespace limpwatch::decision;
  Options options;
  for (int index = 1; index < argc; ++index) {
    std::string flag = argv[index];
    auto value = [&]() -> const char* { return index + 1 < argc ? argv[++index] : nullptr; };
    if (flag == "--help" || flag == "-h") {
      std::printf("usage: decision_suite [--server-days N] [--reps N] [--quick] [--seed N] [--no-seed-rule]\n");
      return 0;
    } else if (flag == "--server-days") {
      const char* text = value();
      if (!text || (options.server_days = std::atof(text)) <= 0) return Usage("--server-days takes a positive number");
    } else if (flag == "--reps") {
      const char* text = value();
      if (!text || (options.reps = std::atoi(text)) <= 0) return Usage("--reps takes a positive number");
    } else if (flag == "--seed") {
      const char* text = value();
      if (!text) return Usage("--seed takes a number");
      options.seed = uint32_t(std::strtoul(text, nullptr, 10));
    } else if (flag == "--quick") {
      options.quick = true;
    } else if (flag == "--no-seed-rule") {
      options.seed_rule = false;
    } else {
      return Usage(("unknown option " + flag).c_str());
    }
  }
  std::printf("# Decision suite (seed %u)\n", options.seed);
  FalseAlarms(options);
  Limps(options);
  return 0;
}
