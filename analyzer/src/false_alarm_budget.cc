#include "limpwatch/analyzer/false_alarm_budget.h"

#include <algorithm>
#include <cmath>

namespace limpwatch::analyzer {

double FalseAlarmBudget::WindowsPerFalseAlarm() const {
  return server_days_per_false_alarm * 86400.0 / std::max(window_shift_s, 1e-3);
}

double FalseAlarmBudget::Threshold() const {
  return std::log(std::max(WindowsPerFalseAlarm() * double(std::max<size_t>(charts, 1)), 2.0));
}

}  // namespace limpwatch::analyzer
