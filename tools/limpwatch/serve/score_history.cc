#include "serve/score_history.h"

#include <set>

namespace limpwatch::cli::serve {

void ScoreHistory::Record(const Collection& collection) {
  std::set<std::string> served;
  for (const ServedSegment& segment : collection.segments) {
    served.insert(segment.server);
    const shm::ScoreStatusValues& scores = segment.snapshot->score_status;
    ServerScores& server = servers_[segment.server];
    if (!scores.valid || scores.updated_unix_ms <= server.last_window_ms) continue;
    server.last_window_ms = scores.updated_unix_ms;
    for (const shm::ScoreRow& row : scores.scores) {
      std::deque<ScorePoint>& points = server.metrics[row.metric];
      points.push_back({scores.updated_unix_ms, row.score, row.threshold, row.anomalous});
    }
    uint64_t oldest = scores.updated_unix_ms > span_ms_ ? scores.updated_unix_ms - span_ms_ : 0;
    for (auto& [metric, points] : server.metrics) {
      while (!points.empty() && points.front().unix_ms < oldest) points.pop_front();
    }
  }
  std::erase_if(servers_, [&served](const auto& entry) { return !served.count(entry.first); });
}

uint64_t ScoreHistory::oldest_ms() const {
  uint64_t oldest = 0;
  for (const auto& [server, scores] : servers_) {
    for (const auto& [metric, points] : scores.metrics) {
      if (!points.empty() && (oldest == 0 || points.front().unix_ms < oldest)) oldest = points.front().unix_ms;
    }
  }
  return oldest;
}

}  // namespace limpwatch::cli::serve
