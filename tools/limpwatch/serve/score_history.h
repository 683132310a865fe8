// The scores each served server's analyzer gave it, over the last minutes,
// kept by `limpwatch serve` for its dashboard: the segment holds only the
// newest window's (shm::ScoreStatusBlock), so serve records one point per
// compared window while it runs.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SCORE_HISTORY_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SCORE_HISTORY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "serve/segment_collector.h"

namespace limpwatch::cli::serve {

struct ScorePoint {
  uint64_t unix_ms = 0;  // when the window was compared
  double score = 0;
  double threshold = 0;
  bool over = false;
};

struct ServerScores {
  uint64_t last_window_ms = 0;
  std::map<std::string, std::deque<ScorePoint>> metrics;  // by metric name
};

class ScoreHistory {
 public:
  explicit ScoreHistory(uint64_t span_ms) : span_ms_(span_ms) {}

  // Adds the windows compared since the last call; forgets points older
  // than the span before the newest, and servers no longer served.
  void Record(const Collection& collection);

  const std::map<std::string, ServerScores>& servers() const { return servers_; }
  // The oldest point kept, of any server; 0 with none.
  uint64_t oldest_ms() const;
  uint64_t span_ms() const { return span_ms_; }

 private:
  uint64_t span_ms_;
  std::map<std::string, ServerScores> servers_;  // by server label
};

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SCORE_HISTORY_H_
