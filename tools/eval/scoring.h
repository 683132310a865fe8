// Scoring fault-injection experiments as seed 000's Table 1 does: a true
// positive when every faulty server is indicted, a false positive when any
// fault-free server is, per metric and combined; plus the latency from the
// fault to the first alarm and whether the alarm named the right resource.
//
// A cluster-wide fault (a regression on every server, slow-path) has no
// faulty server: no peer limps beside the others, so any alarm during it is a
// false positive and a true positive does not apply, as for a fault-free run.
#ifndef LIMPWATCH_TOOLS_EVAL_SCORING_H_
#define LIMPWATCH_TOOLS_EVAL_SCORING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace limpwatch::eval {

// One alarm as a server wrote it (a LIMPWATCH_ALARMS JSON line).
struct ObservedAlarm {
  std::string kind;      // anomaly, silent, local
  std::string reporter;
  std::string server;    // the server indicted
  std::vector<std::string> metrics;
  std::string resource;
  uint64_t time_unix_ms = 0;  // when it was raised
};

// Parses one JSON line of LIMPWATCH_ALARMS; nullopt for a malformed line.
std::optional<ObservedAlarm> ParseAlarmLine(const std::string& line);

// Whether `fault` acts on every server alike (scored with FP only).
bool IsClusterWideFault(const std::string& fault);

struct Experiment {
  std::string workload;
  std::string fault;             // "none" for a fault-free experiment
  std::string faulty_server;     // empty for a fault-free or cluster-wide experiment
  bool cluster_wide = false;     // the fault acts on every server: no faulty server
  std::string expected_resource; // disk, network, cpu, memory, process, or "" when any will do
  int repetition = 0;
  uint64_t start_ms = 0;         // the experiment's start (after the warm-up)
  uint64_t fault_start_ms = 0;   // 0 when fault-free
  uint64_t fault_end_ms = 0;
  uint64_t end_ms = 0;
  std::vector<ObservedAlarm> alarms;
};

struct ExperimentScore {
  bool true_positive_applies = true;  // false: fault-free or cluster-wide, only FP is scored
  bool true_positive = false;       // the faulty server was indicted during the fault
  bool false_positive = false;      // a fault-free server was indicted
  std::map<std::string, bool> true_positive_by_metric;
  std::map<std::string, bool> false_positive_by_metric;
  std::optional<double> latency_s;  // fault start to the first alarm indicting the faulty server
  std::optional<bool> resource_right;
};

// Alarms count from start_ms; an alarm on the faulty server counts as a true
// positive from the fault's start until `grace_ms` after its end (windows
// that overlap the fault end after it).
ExperimentScore ScoreExperiment(const Experiment& experiment, uint64_t grace_ms);

// Rates per fault class (or per workload x fault), as percentages.
struct ClassScore {
  bool true_positive_applies = true;  // false: fault-free or cluster-wide, only FP is scored
  bool cluster_wide = false;
  int experiments = 0;
  int true_positives = 0;
  int false_positives = 0;
  std::map<std::string, int> true_positives_by_metric;
  std::map<std::string, int> false_positives_by_metric;
  std::vector<double> latencies_s;
  int resource_checked = 0;
  int resource_right = 0;
};

std::map<std::string, ClassScore> ScoreByFault(const std::vector<Experiment>& experiments, uint64_t grace_ms);

}  // namespace limpwatch::eval

#endif  // LIMPWATCH_TOOLS_EVAL_SCORING_H_
