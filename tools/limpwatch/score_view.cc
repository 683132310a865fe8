#include "score_view.h"

#include "format.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

const char* StateOf(const shm::ScoreRow& row) {
  if (row.warming_up) return "warming up";
  return row.anomalous ? "OVER" : "ok";
}

// The score as a share of its threshold: how close the server is to being
// marked. "-" where the threshold is not positive.
std::string ShareOfThreshold(const shm::ScoreRow& row) {
  if (!(row.threshold > 0)) return "-";
  return FormatFixed(100.0 * row.score / row.threshold, 0) + " %";
}

}  // namespace

std::string RenderScoreStatusText(const shm::ScoreStatusValues& scores) {
  std::string out = "SCORES (this server against its peers, newest window compared)\n";
  if (!scores.valid) return out + "(none yet: no analyzer, or it has not compared a window)\n";
  out += "window " + std::to_string(scores.window) + ", compared " +
         FormatLocalTime(scores.updated_unix_ms * 1000000, true) + " among " + std::to_string(scores.servers_compared) +
         " servers\n";
  Table table({{"METRIC"},
               {"SCORE", Align::kRight},
               {"THRESHOLD", Align::kRight},
               {"OF THRESHOLD", Align::kRight},
               {"RATIO TO PEERS", Align::kRight},
               {"NOISE", Align::kRight},
               {"STATE"},
               {"THRESHOLD FROM"}});
  for (const shm::ScoreRow& row : scores.scores) {
    table.AddRow({row.metric, FormatFixed(row.score, 3), FormatFixed(row.threshold, 3), ShareOfThreshold(row),
                  row.ratio > 0 ? FormatFixed(row.ratio, 2) + "x" : "-", FormatFixed(row.sigma, 3), StateOf(row),
                  row.trained ? "training" : "default rule"});
  }
  return out + table.Render();
}

void WriteScoreStatusJson(JsonWriter* json, const shm::ScoreStatusValues& scores) {
  json->Key("scores");
  if (!scores.valid) {
    json->Null();
    return;
  }
  json->BeginObject();
  json->Field("window", scores.window);
  json->Field("updated_unix_ms", scores.updated_unix_ms);
  json->Field("servers_compared", scores.servers_compared);
  json->Key("metrics");
  json->BeginArray();
  for (const shm::ScoreRow& row : scores.scores) {
    json->BeginObject();
    json->Field("metric", row.metric);
    json->Field("score", row.score);
    json->Field("threshold", row.threshold);
    json->Field("ratio", row.ratio);
    json->Field("sigma", row.sigma);
    json->Field("anomalous", row.anomalous);
    json->Field("warming_up", row.warming_up);
    json->Field("trained", row.trained);
    json->EndObject();
  }
  json->EndArray();
  json->EndObject();
}

}  // namespace limpwatch::cli
