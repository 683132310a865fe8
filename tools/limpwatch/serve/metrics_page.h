// What `limpwatch serve` shows: the node's segments collected at most once
// per `reuse_ms` (so that many scrapers at once cost one collection, not one
// each), rendered as the /metrics exposition (and the textfile's content)
// or as the dashboard, and the scores recorded over time for its charts.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_PAGE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_PAGE_H_

#include <cstdint>
#include <string>

#include "serve/metrics_exposition.h"
#include "serve/score_history.h"
#include "serve/segment_collector.h"

namespace limpwatch::cli::serve {

// The dashboard's charts span this long.
inline constexpr uint64_t kScoreHistoryMs = 10 * 60 * 1000;

class MetricsPage {
 public:
  MetricsPage(bool all_users, ExpositionSettings settings, int reuse_ms)
      : collector_(all_users), settings_(settings), reuse_ms_(reuse_ms), history_(kScoreHistoryMs) {}

  // Collects unless the last collection is under `reuse_ms` old.
  void Refresh();

  // The exposition text, of a collection at most `reuse_ms` old.
  const std::string& Render();
  std::string Dashboard();
  // Empty when no served segment has that server label.
  std::string ServerPage(const std::string& server);

 private:
  SegmentCollector collector_;
  ExpositionSettings settings_;
  int reuse_ms_;
  ScoreHistory history_;
  int64_t collected_at_ms_ = -1;
  Collection collection_;
  bool page_current_ = false;
  std::string page_;
};

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_PAGE_H_
