#include "limpwatch/analyzer/thresholds.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace limpwatch::analyzer {
namespace {

constexpr const char* kMetricNames[kComparedMetricCount] = {"samples", "count", "time",    "dread",
                                                            "dwrite",  "nsread", "ncread", "rtt",
                                                            "loss",    "cpuwait", "dsync",  "majflt"};

}  // namespace

const char* ComparedMetricName(ComparedMetric metric) { return kMetricNames[static_cast<int>(metric)]; }

std::optional<ComparedMetric> ParseComparedMetric(std::string_view name) {
  for (int index = 0; index < kComparedMetricCount; ++index) {
    if (name == kMetricNames[index]) return static_cast<ComparedMetric>(index);
  }
  return std::nullopt;
}

bool IsVectorMetric(ComparedMetric metric) {
  return metric == ComparedMetric::kSamples || metric == ComparedMetric::kCount || metric == ComparedMetric::kTime;
}

bool IsTrainedMetric(ComparedMetric metric) { return metric != ComparedMetric::kLoss; }

double ThresholdResolution(ComparedMetric metric) { return IsVectorMetric(metric) ? 1.0 : 0.01; }

double DefaultThresholdFloor(ComparedMetric metric) {
  switch (metric) {
    case ComparedMetric::kSamples: return 20;   // samples per window
    // Calls per window. Fault-free test-bed servers under postmark, a load
    // that training (ddw, ddr) does not see, drift up to 576 apart in a window;
    // a server swapping its pages back in, or failing its writes, 1,200-3,500
    // (measured).
    case ComparedMetric::kCount: return 600;
    case ComparedMetric::kTime: return 200;     // ms of self time per window
    // ms: a loaded healthy test-bed connection on loopback shows up to 8, and
    // healthy OrangeFS servers under a bulk copy showed up to 15.5 over their
    // peers' median (measured); a link delaying 20 ms each way adds 40.
    case ComparedMetric::kRoundTrip: return 25;
    // ms of [lost packets] a tick: fifty segments out of order, or ten
    // retransmission timeouts in a 4-tick window. Healthy test-bed servers
    // under a read load lose 1-3 s worth a tick each, and when one of them
    // crashes or slows the others' losses shift by up to 360 ms a tick
    // (measured); a lossy link adds 0.7-17 s a tick.
    case ComparedMetric::kLoss: return 500;
    // ms of [waiting for a CPU] a tick: healthy test-bed servers sharing two
    // cores wait 0.1-0.56 s a tick each, within 0.22 s of one another in the
    // first second of a run and 0.06 s after it (measured); a CPU quota of a
    // third of what the server used makes it wait 1.6-2.2 s. Busier peers
    // raise the bar further: twice their median is the default threshold.
    case ComparedMetric::kCpuWait: return 200;
    // Major page faults a tick: healthy test-bed servers fault none once
    // started (measured under ddw), and one sharing a memory cgroup at its
    // limit with a growing process faulted 10-120 a second.
    case ComparedMetric::kMajorFaults: return 10;
    // ms per write call over the peers' median. Healthy test-bed servers
    // writing a stream to disks of their own, on one host disk, drift up to
    // 2.6 ms apart for a few seconds, which a minute of training may not
    // see; a competing reader on a server's disk adds 3.6-13 ms (measured).
    case ComparedMetric::kDwrite: return 3.0;
    default: return 1.0;                        // ms per I/O call
  }
}

void Thresholds::Set(const std::string& server, ComparedMetric metric, double threshold) {
  values_[{server, metric}] = threshold;
}

std::optional<double> Thresholds::Get(const std::string& server, ComparedMetric metric) const {
  auto found = values_.find({server, metric});
  if (found == values_.end()) found = values_.find({"*", metric});
  if (found == values_.end()) return std::nullopt;
  return found->second;
}

std::optional<Thresholds::Spread> Thresholds::GetSpread(ComparedMetric metric) const {
  auto found = spreads_.find(metric);
  if (found == spreads_.end()) return std::nullopt;
  return found->second;
}

void Thresholds::SetUsual(const std::string& server, ComparedMetric metric, double log_ratio) {
  usual_[{server, metric}] = log_ratio;
}

std::optional<double> Thresholds::GetUsual(const std::string& server, ComparedMetric metric) const {
  auto found = usual_.find({server, metric});
  if (found == usual_.end()) return std::nullopt;
  return found->second;
}

bool Thresholds::Load(const std::string& path, std::vector<std::string>* problems) {
  std::ifstream file(path);
  if (!file) return false;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.empty()) continue;  // blank
    std::string where = path + ":" + std::to_string(number) + ": ";
    auto number_at = [&words](size_t index, double* value) {
      char* end = nullptr;
      *value = std::strtod(words[index].c_str(), &end);
      return end != words[index].c_str() && *end == '\0' && std::isfinite(*value);
    };
    bool spread = words.size() == 5 && words[2] == "spread";
    bool usual = words.size() == 4 && words[2] == "usual";
    if (words.size() != 3 && !spread && !usual) {
      problems->push_back(where + "expected '<server> <metric> <threshold>', '* <metric> spread <sigma> <windows>' or "
                                  "'<server> <metric> usual <log ratio>'");
      continue;
    }
    const std::string& server = words[0];
    const std::string& metric_name = words[1];
    auto metric = ParseComparedMetric(metric_name);
    if (!metric) {
      problems->push_back(where + "unknown metric '" + metric_name + "'");
      continue;
    }
    if (spread) {
      Spread learnt;
      if (!number_at(3, &learnt.sigma) || !number_at(4, &learnt.windows) || learnt.sigma < 0 || learnt.windows < 0) {
        problems->push_back(where + "spread and windows must be non-negative numbers");
        continue;
      }
      SetSpread(*metric, learnt);
      continue;
    }
    if (usual) {
      double log_ratio = 0;
      if (!number_at(3, &log_ratio)) {
        problems->push_back(where + "usual ratio '" + words[3] + "' is not a number");
        continue;
      }
      SetUsual(server, *metric, log_ratio);
      continue;
    }
    double value = 0;
    if (!number_at(2, &value) || value < 0) {
      problems->push_back(where + "threshold '" + words[2] + "' is not a non-negative number");
      continue;
    }
    Set(server, *metric, value);
  }
  return true;
}

std::string Thresholds::Format() const {
  std::ostringstream out;
  out << "# limpwatch thresholds: <server> <metric> <threshold> (seed rule), * <metric> spread <sigma> <windows>\n";
  out << "# and <server> <metric> usual <log ratio> (calibrated rule)\n";
  for (const auto& [key, value] : values_) {
    out << key.first << ' ' << ComparedMetricName(key.second) << ' ' << value << '\n';
  }
  for (const auto& [metric, spread] : spreads_) {
    out << "* " << ComparedMetricName(metric) << " spread " << spread.sigma << ' ' << spread.windows << '\n';
  }
  for (const auto& [key, value] : usual_) {
    out << key.first << ' ' << ComparedMetricName(key.second) << " usual " << value << '\n';
  }
  return out.str();
}

bool Thresholds::Save(const std::string& path, std::string* error) const {
  std::ofstream file(path, std::ios::trunc);
  file << Format();
  file.close();
  if (!file) {
    *error = "cannot write thresholds to '" + path + "'";
    return false;
  }
  return true;
}

double TrainThreshold(const std::vector<double>& fault_free_scores, double resolution, double margin) {
  if (fault_free_scores.empty()) return 0.0;
  auto anomalies = [&](uint64_t units) {
    double threshold = double(units) * resolution;
    return std::count_if(fault_free_scores.begin(), fault_free_scores.end(),
                         [threshold](double score) { return score > threshold; });
  };
  uint64_t low = 0, high = 1;
  while (anomalies(high) > 0) high *= 2;  // an upper bound that removes every anomaly
  while (low < high) {
    uint64_t middle = low + (high - low) / 2;
    if (anomalies(middle) > 0) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return margin * double(low) * resolution;
}

double TrainingMargin(ComparedMetric metric) {
  switch (metric) {
    // ms per read / write call over the peers' median. Healthy test-bed
    // servers burst up to 2.8 ms apart in a minute of training; a competing
    // reader on a server's disk adds 3.6-13 ms (measured). Doubled, such a
    // burst hid the mildest hogs; one and a half times keeps them in sight,
    // with the metrics' floors (1 and 3 ms) under it.
    case ComparedMetric::kDread:
    case ComparedMetric::kDwrite: return 1.5;
    default: return 2.0;
  }
}

double TrainMetricThreshold(ComparedMetric metric, const std::vector<double>& fault_free_scores) {
  return TrainThreshold(fault_free_scores, ThresholdResolution(metric), TrainingMargin(metric));
}

}  // namespace limpwatch::analyzer
