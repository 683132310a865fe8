// Page's CUSUM for "this server's ratio to its peers has shifted up", run
// for several sizes of limp at once (a multi-chart CUSUM): a small shift
// needs many windows of evidence and a large one few, and one chart tuned
// to 1.2x would take a minute to see a 20x CPU quota.
//
// Each window's evidence is a log-likelihood ratio: "the server's level is
// a limp of this chart's size" against "it is at most `tolerated` times its
// peers'". A chart stands for the limps from its size to the next chart's
// (the last one: up to a thousand times its own), every log level in between
// equally likely, so a limp between two sizes or far beyond the last is
// still evidence. Around its level a window's log ratio is normal
// with spread `sigma`, except for bursts, always slower: a share
// `tail_share` of windows lie `tail_start` or more above the level, spread
// exponentially by `tail_scale` (residual_history.h), and windows never seen
// among healthy servers are `rarest` of them (one window in those the noise
// was learnt from; `rarest_beyond`, one in all they ever had, past the
// largest deviation they ever had), spread over sizes a factor e apart. A
// window far beyond both levels is a burst under either hypothesis and says
// little; one near the limp and far from the tolerated level says much, but
// never more than its rarity allows. `excess` is the server's log ratio
// (over its usual one, for the profile metrics). Each window's evidence is
// divided by `wander`: windows overlap (each tick counts in window / shift of
// them) and a load that drifts for minutes makes neighbouring windows alike,
// so summing windows would count the same evidence several times. A chart's
// sum never falls below 0 and never climbs above kCeiling times the
// threshold, so a long limp that ends is forgotten in bounded time.
//
// With the threshold h = log(expected windows between false alarms x
// charts) (false_alarm_budget.h), the sum of a healthy server's charts
// crosses h no more often than the budget allows (Lorden: a CUSUM of
// likelihood ratios has an average run length of at least e^h under the
// null); the decision suite measures how well that holds on heavy-tailed
// and drifting data.
#ifndef LIMPWATCH_ANALYZER_SHIFT_DETECTOR_H_
#define LIMPWATCH_ANALYZER_SHIFT_DETECTOR_H_

#include <cstddef>
#include <vector>

namespace limpwatch::analyzer {

struct ShiftNoise {
  double sigma = 0;        // spread of one window's log ratio around its level
  double wander = 1;       // how many windows carry the same evidence
  double tail_start = 0;   // bursts: this far above the level or more,
  double tail_share = 0;   //   in this share of the windows,
  double tail_scale = 0;   //   their mean excess beyond tail_start
  double rarest = 0;       // no window is taken as rarer than this,
  double rarest_beyond = 0;  // or, beyond the largest deviation healthy servers ever had, this
  double largest = 0;        // that deviation
};

class ShiftDetector {
 public:
  static constexpr double kCeiling = 2.0;

  // `limp_logs`: the log of each limp size watched for; `tolerated_log`: the
  // log of the largest healthy difference.
  ShiftDetector(const std::vector<double>* limp_logs, double tolerated_log);

  // Adds one window's evidence; returns the largest chart's sum.
  double Update(double excess, const ShiftNoise& noise, double threshold);
  // The evidence one window adds to one chart, without adding it.
  double Evidence(double excess, const ShiftNoise& noise, size_t chart) const;

  double statistic() const;           // the largest chart's sum
  // What the last window added to the largest chart, before its bounds: above
  // 0 while the limp is still seen.
  double last_gain() const { return last_gain_; }
  size_t strongest_chart() const;     // its index in limp_logs
  void Reset();

 private:
  const std::vector<double>* limp_logs_;
  double tolerated_log_;
  std::vector<double> sums_;
  std::vector<double> gains_;
  double last_gain_ = 0;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SHIFT_DETECTOR_H_
