// The /metrics page (and the textfile's content): the node's segments
// collected and rendered, at most once per `reuse_ms`, so that many scrapers
// at once cost one collection, not one each.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_PAGE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_PAGE_H_

#include <cstdint>
#include <string>

#include "serve/metrics_exposition.h"
#include "serve/segment_collector.h"

namespace limpwatch::cli::serve {

class MetricsPage {
 public:
  MetricsPage(bool all_users, ExpositionSettings settings, int reuse_ms)
      : collector_(all_users), settings_(settings), reuse_ms_(reuse_ms) {}

  // The exposition text, collected now or at most `reuse_ms` ago.
  const std::string& Render();

 private:
  SegmentCollector collector_;
  ExpositionSettings settings_;
  int reuse_ms_;
  int64_t rendered_at_ms_ = -1;
  std::string page_;
};

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_METRICS_PAGE_H_
