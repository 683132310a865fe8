// Per-peer time series judged by the calibrated decision: the columns of a
// CSV export (`limpwatch diagnose metrics.csv`) or the decision suite's
// generated clusters. Each column is a metric: a symptom where more is
// worse (a latency, a service time), or a load that explains them.
//
// Ticks arrive in time order, every peer's value of a tick together. Windows
// of `window_ticks` ticks every `shift_ticks`, as online; a peer's value in
// a window is the median of its ticks there (a burst of one tick moves it
// little). A peer without a tick in a window is missing from that window,
// not silent: a gap in an export is missing data.
#ifndef LIMPWATCH_ANALYZER_SERIES_DIAGNOSIS_H_
#define LIMPWATCH_ANALYZER_SERIES_DIAGNOSIS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/calibrated_decision.h"

namespace limpwatch::analyzer {

struct SeriesSettings {
  uint32_t window_ticks = 4;
  uint32_t shift_ticks = 1;
  double tick_s = 1;
  uint32_t suppression_s = 30;  // a server alarmed again only this long after its last alarm
  uint64_t first_unix_ms = 0;   // the time of tick 0, for the alarms' times
};

class SeriesDiagnosis {
 public:
  SeriesDiagnosis(const SeriesSettings& series, DecisionSettings decision, std::vector<DecisionMetric> columns);

  // One tick: each peer's column values (NaN where a cell was empty).
  // Returns the alarms the windows it completes raise.
  std::vector<Alarm> AddTick(uint64_t tick, const std::vector<std::string>& peers,
                             const std::vector<std::vector<double>>& values);

  // Called after each window with its evidence (the decision suite times indictments with it).
  void OnWindow(std::function<void(const DecisionWindow&)> observer) { observer_ = std::move(observer); }

  const CalibratedDecision& decision() const { return decision_; }
  uint64_t windows() const { return windows_; }
  // Alarms naming each server.
  const std::map<std::string, std::vector<Alarm>>& alarms_by_server() const { return alarms_by_server_; }

 private:
  struct PeerSeries {
    std::deque<std::pair<uint64_t, std::vector<double>>> recent;  // tick, values
    uint64_t windows_seen = 0;
    bool indicted = false;
    uint64_t last_alarm_window = 0;
    uint64_t last_indicted_window = 0;
    bool alarmed = false;
  };
  std::vector<Alarm> CompleteWindow(uint64_t last_tick);
  Alarm BuildAlarm(const ServerEvidence& evidence, uint64_t window, uint64_t last_tick) const;

  SeriesSettings series_;
  CalibratedDecision decision_;
  std::map<std::string, PeerSeries> peers_;
  std::function<void(const DecisionWindow&)> observer_;
  uint64_t windows_ = 0;
  bool have_tick_ = false;
  uint64_t last_tick_ = 0;
  std::map<std::string, std::vector<Alarm>> alarms_by_server_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SERIES_DIAGNOSIS_H_
