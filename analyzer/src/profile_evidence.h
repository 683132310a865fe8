// What "worse" means for the profiles peers exchange (samples, count, time
// per function), so that the calibrated decision can judge them with a
// direction like the service times (calibrated_decision.h).
//
// Each is the server's cost for its own work over what the same work costs
// its peers, as a log ratio (above 0: slower):
//   time:    its self time over what its calls would have taken at its
//            peers' median time per call of each function. A server that
//            does more or other work than its peers is not slower for it; a
//            server whose disk functions take twice as long per call is, by
//            the share of its time they take. Functions no peer called, or
//            that the server did not complete a call of, count the same on
//            both sides.
//   samples: its CPU samples per traced call, over its peers' median.
//   count:   its traced calls per byte of requests it served, over its
//            peers' median: a server reading its messages in smaller pieces,
//            or retrying, does more calls for the same work.
// Functions the manifest marks idle (where threads wait for work) are left
// out, and from the calls those it marks uncounted, as in the seed rule;
// so are limpwatch's own features ([file sync], [lost packets], ...), which
// are metrics of their own, and failed calls.
//
// A server doing less than a tenth of its peers' median work in a window
// (traced calls, samples, request bytes) is not compared on that metric:
// the ratio of a few stray calls says nothing.
#ifndef LIMPWATCH_ANALYZER_SRC_PROFILE_EVIDENCE_H_
#define LIMPWATCH_ANALYZER_SRC_PROFILE_EVIDENCE_H_

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::analyzer {

struct ProfileRatios {
  // Per summary, NaN when not compared.
  std::vector<double> time, samples, count;
  // Per summary: each function's self time over what its calls would have
  // taken at the peers' time per call (ms, positive only): where a slower
  // server's extra time went.
  std::vector<std::unordered_map<uint32_t, double>> excess_time;
  // Per summary: each function's calls over what the bytes its requests
  // moved would have taken at the peers' median calls per byte (positive
  // only): whose calls a count anomaly is made of.
  std::vector<std::unordered_map<uint32_t, double>> excess_calls;
  // Per summary: each sampled function's samples over what the server's
  // traced calls would have drawn at the peers' median samples per call
  // (positive only): where a samples anomaly's CPU went.
  std::vector<std::unordered_map<uint32_t, double>> excess_samples;
};

// `left_out(key, metric)`: true for a feature that is not work (idle,
// uncounted for calls, limpwatch's own, failed calls).
ProfileRatios ComputeProfileRatios(const std::vector<const PeerSummary*>& summaries,
                                   const std::function<bool(uint32_t, Metric)>& left_out);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_PROFILE_EVIDENCE_H_
