// The threshold of the calibrated decision, from the false alarms an
// operator accepts rather than from a constant found on one cluster.
//
// A CUSUM of log-likelihood ratios crosses h no sooner than e^h windows on
// average when nothing is wrong (Lorden 1971). A server watched by C charts
// (limp sizes x metrics) gets a false alarm no more than once per
// e^h / C windows, so for at most one false alarm per B server-days:
//     h = log(B x windows a day x C).
// At 1 s windows, B = 100 and 44 charts: h = 19.8 nats; at 15 s windows and
// 4 charts: 14.6.
#ifndef LIMPWATCH_ANALYZER_FALSE_ALARM_BUDGET_H_
#define LIMPWATCH_ANALYZER_FALSE_ALARM_BUDGET_H_

#include <cstddef>

namespace limpwatch::analyzer {

struct FalseAlarmBudget {
  double server_days_per_false_alarm = 100;
  double window_shift_s = 1;  // seconds between two windows
  size_t charts = 1;          // limp sizes x metrics watched per server

  double Threshold() const;
  // Windows in the budget's period: the average run length h guarantees.
  double WindowsPerFalseAlarm() const;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_FALSE_ALARM_BUDGET_H_
