#include "analyzer/synthetic_cluster.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string_view>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::testing {
namespace {

struct SyntheticFunction {
  const char* name;
  const char* resource;
  double calls_per_s;
  double self_ms_per_s;
  double samples_per_s;
  bool storage;
  bool network_receive;
  bool idle = false;
  bool runqueue = false;
  bool lost_packets = false;
  bool round_trip = false;
  bool storage_full_error = false;
};

constexpr SyntheticFunction kFunctions[] = {
    {"storage_pread_block", "disk", 200, 150, 4, true, false},
    {"storage_pwrite_block", "disk", 150, 120, 4, true, false},
    {"storage_fsync_object", "disk", 5, 40, 0, true, false},
    {"meta_lookup_key", "disk", 300, 30, 6, false, false},
    {"net_recv_message", "network", 800, 20, 30, false, true},
    {"net_send_message", "network", 800, 25, 35, false, false},
    {"net_poll_loop", "network", 1000, 300, 8, false, false},
    {"tcp_recvmsg", "network", 0, 0, 40, false, true},
    {"job_schedule_next", "cpu", 400, 5, 10, false, false},
    {"flow_copy_buffer", "cpu", 400, 60, 60, false, false},
    {"list_push", "cpu", 3000, 1, 1, false, false},
    {"mutex_lock", "cpu", 5000, 2, 2, false, false},
    {"job_wait_for_work", "idle", 100, 1500, 0, false, false, true},
    {"storage_wait_for_operation", "idle", 100, 1500, 0, false, false, true},
    {analyzer::kRunqueueWaitName, "cpu", 0, 40, 0, false, false, false, true},
    // The odd lost segment of a healthy network: 0.2 a second, 10 ms each.
    {analyzer::kLostPacketsName, "network", 0.2, 2, 0, false, false, false, false, true},
    // A loaded loopback connection's round trip: 0.5 ms.
    {analyzer::kRoundTripName, "network", 1, 0.5, 0, false, false, false, false, false, true},
    // Lookups of names that do not exist, spread over every server: errors, but normal ones.
    {"[error ENOENT in file open]", "disk", 5, 0, 0, false, false},
    // Failed writes: none unless the storage is full.
    {"[error ENOSPC in file write]", "disk", 0, 0, 0, false, false, false, false, false, false, true},
};

// The function that syncs the storage, and what each of its syncs costs
// (SyntheticCluster::syncs_per_second of them), seen by the I/O hooks as the
// [file sync] feature.
constexpr std::string_view kSyncingFunction = "storage_fsync_object";
constexpr double kSyncMs = 7;
constexpr double kSlowSyncFactor = 15;

}  // namespace

std::string ServerName(int index) { return "server" + std::to_string(index); }

std::map<std::string, std::vector<analyzer::TickRecord>> GenerateCluster(const SyntheticCluster& cluster) {
  std::map<std::string, std::vector<analyzer::TickRecord>> result;
  std::mt19937_64 random(cluster.seed);
  std::uniform_real_distribution<double> jitter(-cluster.noise, cluster.noise);
  // Its own generator, so that the other features' values do not move with it.
  std::mt19937_64 sync_random(cluster.seed ^ 0x5f5f5f5fu);
  std::vector<double> syncs_owed(size_t(cluster.servers), 0.0);
  for (int t = 0; t < cluster.ticks; ++t) {
    double load = 1.0 + 0.3 * std::sin(double(t) / 7.0) + 0.1 * std::sin(double(t) / 2.3);
    for (int server = 0; server < cluster.servers; ++server) {
      bool faulty = cluster.fault != SyntheticFault::kNone && server == cluster.faulty_server &&
                    t >= cluster.fault_start && t < cluster.fault_end;
      bool slow_syncs = faulty && (cluster.fault == SyntheticFault::kSlowSyncs ||
                                   cluster.fault == SyntheticFault::kSlowSyncsOnBusyCpu);
      analyzer::TickRecord tick;
      tick.node = ServerName(server);
      tick.tick = cluster.first_tick + uint64_t(t);
      tick.tick_ms = 1000;
      tick.unix_ms = (tick.tick + 1) * 1000;
      for (const SyntheticFunction& function : kFunctions) {
        double calls = function.calls_per_s * load * (1 + jitter(random));
        double self_ms = function.self_ms_per_s * load * (1 + jitter(random));
        double samples = function.samples_per_s * load * (1 + jitter(random));
        bool slow_disk = cluster.fault == SyntheticFault::kDiskTime || cluster.fault == SyntheticFault::kDiskThrottled;
        if (faulty && slow_disk && function.storage) {
          self_ms *= 6.0;
          calls *= 0.7;
        }
        if (slow_syncs && function.name == kSyncingFunction) self_ms *= kSlowSyncFactor;
        if (faulty && cluster.fault == SyntheticFault::kCpuStarved && function.runqueue) self_ms *= 8.0;
        if (faulty && cluster.fault == SyntheticFault::kCpuQuota && function.runqueue && t >= cluster.fault_start + 2) {
          self_ms *= 20.0;
        }
        if (faulty && cluster.fault == SyntheticFault::kDiskHogOnSharedCores && function.runqueue) self_ms *= 8.0;
        // Its writes take 20x longer (tick.io below), and so does the
        // function that makes them: self time includes its blocked calls.
        if (faulty && cluster.fault == SyntheticFault::kDiskHogOnSharedCores &&
            function.name == std::string_view("storage_pwrite_block")) {
          self_ms *= 20.0;
        }
        if (faulty && cluster.fault == SyntheticFault::kSlowSyncsOnBusyCpu && function.runqueue) self_ms *= 3.5;
        if (cluster.fault == SyntheticFault::kBusyOnOverloadedCpu && function.runqueue) self_ms *= faulty ? 20.0 : 8.0;
        if (faulty && (cluster.fault == SyntheticFault::kPacketLoss || cluster.fault == SyntheticFault::kCpuShared) &&
            function.lost_packets) {
          calls *= 100.0;
          // A lossy link costs 0.7-17 s a second on the test-bed (mostly retransmission timeouts).
          self_ms *= cluster.fault == SyntheticFault::kPacketLoss ? 600.0 : 100.0;
        }
        if (faulty && cluster.fault == SyntheticFault::kDiskThrottled && function.lost_packets) {
          calls *= 30.0;
          self_ms *= 100.0;
        }
        if (faulty && cluster.fault == SyntheticFault::kLossBurst && function.lost_packets) {
          calls = 20;
          self_ms = 4000;
        }
        if (faulty && cluster.fault == SyntheticFault::kIdleSplit && function.idle) {
          self_ms *= &function == &kFunctions[std::size(kFunctions) - 1] ? 0.2 : 1.8;
        }
        if (faulty && cluster.fault == SyntheticFault::kCpuShared && function.runqueue) self_ms *= 8.0;
        if (faulty && cluster.fault == SyntheticFault::kMemoryThrashing && function.storage) self_ms *= 3.0;
        if (faulty && cluster.fault == SyntheticFault::kNetworkDelay && function.round_trip) self_ms *= 80.0;
        if (faulty && cluster.fault == SyntheticFault::kBusyLinks && function.round_trip) self_ms *= 30.0;
        if (faulty && cluster.fault == SyntheticFault::kStorageFull && function.storage_full_error) {
          calls = 20.0 * (1 + jitter(random));
        }
        if (faulty && (cluster.fault == SyntheticFault::kNetworkCount || cluster.fault == SyntheticFault::kCpuShared) &&
            function.network_receive) {
          calls *= 4.0;
          samples *= 5.0;
        }
        analyzer::FunctionTick entry;
        entry.name_hash = shm::FunctionNameHash(function.name);
        entry.calls = uint64_t(std::max(0.0, calls));
        entry.self_ms = std::max(0.0, self_ms);
        entry.samples = uint64_t(std::max(0.0, samples));
        if (entry.calls || entry.samples || entry.self_ms > 0) tick.functions.push_back(entry);
      }
      analyzer::FunctionTick syncs;
      syncs.name_hash = shm::FunctionNameHash(analyzer::kFileSyncName);
      double& owed = syncs_owed[size_t(server)];
      owed += cluster.syncs_per_second * load;
      syncs.calls = uint64_t(owed);
      owed -= double(syncs.calls);
      syncs.self_ms = double(syncs.calls) * kSyncMs * (1 + jitter(sync_random));
      if (slow_syncs) syncs.self_ms *= kSlowSyncFactor;
      if (syncs.calls > 0) tick.functions.push_back(syncs);
      if (faulty && (cluster.fault == SyntheticFault::kMemoryThrashing ||
                     cluster.fault == SyntheticFault::kPagesSwappedOut)) {
        analyzer::FunctionTick faults;
        faults.name_hash = shm::FunctionNameHash(analyzer::kMajorFaultsName);
        double per_tick = cluster.fault == SyntheticFault::kMemoryThrashing ? 300 : 30;
        faults.calls = uint64_t(per_tick * (1 + jitter(random)));
        faults.self_ms = double(faults.calls) * analyzer::kMajorFaultMs;
        tick.functions.push_back(faults);
      }
      std::sort(tick.functions.begin(), tick.functions.end(),
                [](const auto& a, const auto& b) { return a.name_hash < b.name_hash; });
      double dread = 0.5 * (1 + jitter(random));
      double dwrite = 0.8 * (1 + jitter(random));
      if (faulty && (cluster.fault == SyntheticFault::kDiskTime || cluster.fault == SyntheticFault::kDiskThrottled)) {
        dread *= 6;
        dwrite *= 6;
      }
      bool writes_20x_slower =
          cluster.fault == SyntheticFault::kCpuQuota || cluster.fault == SyntheticFault::kDiskHogOnSharedCores;
      if (faulty && writes_20x_slower) dwrite *= 20;
      tick.io.dread_ms = dread;
      tick.io.dwrite_ms = dwrite;
      tick.io.file_reads = 200;
      tick.io.file_writes = 150;
      tick.io.nsread_ms = 0.05 * (1 + jitter(random));
      tick.io.socket_reads = 800;
      tick.io.request_bytes = 50e6 * load * (1 + jitter(random));
      // The CPU the server got: a starved one less (a quota, spinners in its
      // group, a competing reader on its cores), a busy one more.
      double cpu = 400 * load * (1 + jitter(random));
      if (faulty) {
        switch (cluster.fault) {
          case SyntheticFault::kCpuStarved:
          case SyntheticFault::kCpuShared: cpu *= 0.5; break;
          case SyntheticFault::kCpuQuota:
            if (t >= cluster.fault_start + 2) cpu *= 0.3;
            break;
          case SyntheticFault::kDiskHogOnSharedCores: cpu *= 0.9; break;
          case SyntheticFault::kBusyOnOverloadedCpu: cpu *= 2.5; break;
          case SyntheticFault::kSlowSyncsOnBusyCpu: cpu *= 3.5; break;
          default: break;
        }
      }
      tick.node_stats.valid = true;
      tick.node_stats.cpu_ms = cpu;
      result[tick.node].push_back(tick);
    }
  }
  return result;
}

analyzer::NameBook SyntheticNames() {
  analyzer::NameBook names;
  for (const SyntheticFunction& function : kFunctions) names.Add(shm::FunctionNameHash(function.name), function.name);
  names.Add(shm::FunctionNameHash(analyzer::kFileSyncName), analyzer::kFileSyncName);
  names.Add(shm::FunctionNameHash(analyzer::kMajorFaultsName), analyzer::kMajorFaultsName);
  return names;
}

analyzer::ResourceManifest SyntheticManifest(bool idle_marked, const std::vector<std::string>& uncounted) {
  analyzer::ResourceManifest manifest;
  for (const SyntheticFunction& function : kFunctions) {
    if (function.runqueue) continue;  // classified by the analyzer itself
    if (function.idle && idle_marked) {
      manifest.AddIdleRule(function.name);
    } else {
      bool marked = std::find(uncounted.begin(), uncounted.end(), function.name) != uncounted.end();
      manifest.AddRule(function.name, function.idle ? shm::Resource::kCpu : *analyzer::ParseResource(function.resource),
                       marked);
    }
  }
  return manifest;
}

std::vector<std::string> StorageFunctionNames() {
  std::vector<std::string> names;
  for (const SyntheticFunction& function : kFunctions) {
    if (function.storage) names.push_back(function.name);
  }
  return names;
}

analyzer::ReplayResult ReplaySynthetic(const SyntheticCluster& cluster, const analyzer::AnalyzerConfig& config,
                                       const analyzer::Thresholds& thresholds) {
  return analyzer::ReplayCluster(config, GenerateCluster(cluster), thresholds, SyntheticManifest(), SyntheticNames(),
                                 nullptr);
}

}  // namespace limpwatch::testing
