// Per-server, per-metric anomaly thresholds: trained (seed 000 section 5.1:
// the smallest threshold that removes every anomaly of fault-free runs,
// found by binary search and doubled) or, where none was trained, a default.
//
// File format, one value a line, '#' starts a comment:
//     <server> <metric> <threshold>            the seed rule's threshold
//     * <metric> spread <sigma> <windows>      the calibrated rule's noise, learnt
//     <server> <metric> usual <log ratio>      a server's usual profile ratio
// <server> may be '*' for every server without a line of its own. The
// calibrated rule needs none of them: training only narrows its noise
// estimate (metric_noise.h) and tells it each server's usual ratio from the
// start (calibrated_decision.h).
#ifndef LIMPWATCH_ANALYZER_THRESHOLDS_H_
#define LIMPWATCH_ANALYZER_THRESHOLDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace limpwatch::analyzer {

// What peers compare: three vector metrics (per function), seed 001's four
// I/O service times, the round trip of the server's TCP connections, the
// packets they lost, how long its threads waited for a CPU, and how long its
// file syncs took (scalars: a server against its peers' median). The last
// four travel as the [network round trip], [lost packets], [waiting for a
// CPU] and [file sync] features of the count and time vectors
// (tick_record.h); their per-tick means (per call, for the syncs) are the
// scalars: no field of the wire format is needed.
//
// Why the CPU wait is a metric of its own and not only one function among
// the time vector's: a server held to a CPU quota waits 1.6-2.2 s a tick
// where its peers wait 0.1-0.35 s (measured on the test-bed, 16-190x), yet
// the time vector's distance is dominated by the many functions whose time
// moves with the load, and its trained threshold (15.8 s a window on the
// test-bed) hid that difference in 4 experiments of 5.
//
// Likewise the major page faults (majflt, from the [major page faults]
// feature, faults a tick): a server whose node ran short of memory reads 10-120
// pages back a second, against none for its peers, yet each costs it about
// a millisecond, far too little to move the time vector.
enum class ComparedMetric : uint8_t {
  kSamples = 0,
  kCount = 1,
  kTime = 2,
  kDread = 3,
  kDwrite = 4,
  kNsread = 5,
  kNcread = 6,
  kRoundTrip = 7,
  kLoss = 8,
  kCpuWait = 9,
  kDsync = 10,
  kMajorFaults = 11,
};
inline constexpr int kComparedMetricCount = 12;

const char* ComparedMetricName(ComparedMetric metric);
std::optional<ComparedMetric> ParseComparedMetric(std::string_view name);
bool IsVectorMetric(ComparedMetric metric);

// False for loss, which `limpwatch train` leaves to the default rule: how
// many packets healthy connections lose depends on the workload far more
// than on the server (on the test-bed a read load loses ten times what a
// write load does), so a threshold learnt over several workloads is too high
// for the lighter ones. A thresholds file may still set one.
bool IsTrainedMetric(ComparedMetric metric);

// The unit in which thresholds are searched (seed 000 searched integers).
double ThresholdResolution(ComparedMetric metric);

// Used when no threshold was trained: a score is anomalous when it exceeds
// both this absolute floor and `default_threshold_factor` times the median
// score of all servers in the window.
double DefaultThresholdFloor(ComparedMetric metric);

class Thresholds {
 public:
  void Set(const std::string& server, ComparedMetric metric, double threshold);
  // The trained threshold, or nullopt (then the default rule applies).
  std::optional<double> Get(const std::string& server, ComparedMetric metric) const;
  bool empty() const { return values_.empty() && spreads_.empty() && usual_.empty(); }

  struct Spread {
    double sigma = 0;    // of one window's log ratio
    double windows = 0;  // learnt over
  };
  void SetSpread(ComparedMetric metric, Spread spread) { spreads_[metric] = spread; }
  std::optional<Spread> GetSpread(ComparedMetric metric) const;
  void SetUsual(const std::string& server, ComparedMetric metric, double log_ratio);
  std::optional<double> GetUsual(const std::string& server, ComparedMetric metric) const;
  // Every usual ratio, by (server, metric).
  const std::map<std::pair<std::string, ComparedMetric>, double>& usual() const { return usual_; }

  // Parses a thresholds file. Malformed lines are reported in *problems
  // ("file:line: ...") and skipped; returns false if the file cannot be read.
  bool Load(const std::string& path, std::vector<std::string>* problems);
  bool Save(const std::string& path, std::string* error) const;
  std::string Format() const;

 private:
  std::map<std::pair<std::string, ComparedMetric>, double> values_;
  std::map<ComparedMetric, Spread> spreads_;
  std::map<std::pair<std::string, ComparedMetric>, double> usual_;
};

// Seed 000's rule: the smallest multiple of `resolution` that no score
// exceeds, found by binary search, then multiplied by `margin` (the seed
// doubles it). 0 scores give 0.
double TrainThreshold(const std::vector<double>& fault_free_scores, double resolution, double margin = 2.0);

// The margin training gives a metric over its largest fault-free score.
double TrainingMargin(ComparedMetric metric);

// TrainThreshold with the metric's resolution and margin: what `train` writes.
double TrainMetricThreshold(ComparedMetric metric, const std::vector<double>& fault_free_scores);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_THRESHOLDS_H_
