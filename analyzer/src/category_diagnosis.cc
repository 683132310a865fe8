#include "limpwatch/analyzer/category_diagnosis.h"

#include <algorithm>
#include <cmath>

#include "limpwatch/analyzer/flow_categories.h"
#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {
namespace {

double LogChoose(double n, double k) { return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1); }

// P(X >= hits) for X the number of a server's rows among `drawn` rows drawn
// from `rows`, `own` of which are the server's.
double HypergeometricUpperTail(size_t rows, size_t own, size_t drawn, size_t hits) {
  double total = 0;
  double log_all = LogChoose(double(rows), double(drawn));
  for (size_t x = hits; x <= std::min(own, drawn); ++x) {
    if (drawn - x > rows - own) continue;
    total += std::exp(LogChoose(double(own), double(x)) + LogChoose(double(rows - own), double(drawn - x)) - log_all);
  }
  return std::min(total, 1.0);
}

}  // namespace

void CategoryDiagnosis::Add(const std::string& server, const FlowSample& flow) {
  CategorizedFlow categorized = CategorizeFlow(flow, [](uint64_t) { return std::string(); });
  if (categorized.calls.empty()) return;
  Category& category = categories_[categorized.category];
  if (category.rows.empty()) category.example = flow;
  auto found = std::find(servers_.begin(), servers_.end(), server);
  Row row;
  row.server = uint32_t(found - servers_.begin());
  if (found == servers_.end()) servers_.push_back(server);
  row.latency_ns = categorized.latency_ns;
  row.end_unix_ms = (flow.begin_unix_ns + uint64_t(categorized.latency_ns)) / 1000000;
  for (const FlowCallTimes& call : categorized.calls) row.self_ns[call.name_hash] += call.self_ns;
  category.rows.push_back(std::move(row));
}

CategoryFinding CategoryDiagnosis::AnalyzeCategory(uint64_t key, const Category& category) const {
  CategoryFinding finding;
  finding.category = key;
  finding.example = category.example;
  // Evenly over the flows when there are more than a decomposition takes.
  std::vector<const Row*> rows;
  size_t stride = (category.rows.size() + settings_.most_rows - 1) / settings_.most_rows;
  for (size_t index = 0; index < category.rows.size(); index += std::max<size_t>(stride, 1)) {
    rows.push_back(&category.rows[index]);
  }
  finding.flows = rows.size();
  std::vector<double> latencies;
  for (const Row* row : rows) {
    ++finding.flows_by_server[servers_[row->server]];
    latencies.push_back(row->latency_ns);
  }
  double mean = 0;
  for (double latency : latencies) mean += latency / double(latencies.size());
  double variance = 0;
  for (double latency : latencies) variance += (latency - mean) * (latency - mean) / double(latencies.size() - 1);
  finding.cv = mean > 0 ? std::sqrt(variance) / mean : 0;

  // Columns: the functions of the category, each divided by its median, so
  // that a function of microseconds and one of milliseconds weigh alike.
  std::vector<uint64_t> functions;
  for (const auto& [hash, self_ns] : rows.front()->self_ns) functions.push_back(hash);
  std::sort(functions.begin(), functions.end());
  Eigen::MatrixXd matrix(rows.size(), functions.size());
  std::vector<size_t> kept;
  for (size_t column = 0; column < functions.size(); ++column) {
    std::vector<double> values(rows.size());
    for (size_t row = 0; row < rows.size(); ++row) {
      auto found = rows[row]->self_ns.find(functions[column]);
      values[row] = found != rows[row]->self_ns.end() ? found->second : 0.0;
    }
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    double scale = MedianOfSorted(sorted);
    if (scale <= 0) continue;  // a function that takes no time in most flows says nothing
    for (size_t row = 0; row < rows.size(); ++row) matrix(long(row), long(kept.size())) = values[row] / scale;
    kept.push_back(column);
  }
  if (kept.size() < settings_.least_columns) return finding;
  Eigen::MatrixXd scaled = matrix.leftCols(long(kept.size()));
  CloudDiagAnalysis analysis = AnalyzeLatencyMatrix(scaled, settings_.cloud_diag);
  for (const AnomalousColumn& column : analysis.anomalous) {
    SlowFunction slow;
    slow.name_hash = functions[kept[column.column]];
    slow.beta = column.beta;
    for (size_t row : column.slow_rows) ++slow.slow_flows[servers_[rows[row]->server]];
    size_t total = column.slow_rows.size();
    for (const auto& [server, count] : slow.slow_flows) {
      if (2 * count <= total) continue;
      slow.p_value = HypergeometricUpperTail(rows.size(), finding.flows_by_server.at(server), total, count);
      if (slow.p_value < settings_.alpha) slow.server = server;
    }
    for (size_t row : column.slow_rows) {
      if (servers_[rows[row]->server] == slow.server) {
        slow.last_slow_unix_ms = std::max(slow.last_slow_unix_ms, rows[row]->end_unix_ms);
      }
    }
    finding.functions.push_back(std::move(slow));
  }
  return finding;
}

std::vector<CategoryFinding> CategoryDiagnosis::Analyze(size_t* analyzed) const {
  std::vector<CategoryFinding> findings;
  size_t decomposed = 0;
  for (const auto& [key, category] : categories_) {
    if (category.rows.size() < settings_.least_flows) continue;
    std::vector<bool> seen(servers_.size(), false);
    size_t servers = 0;
    for (const Row& row : category.rows) {
      if (!seen[row.server]) ++servers;
      seen[row.server] = true;
    }
    if (servers < 2) continue;
    ++decomposed;
    CategoryFinding finding = AnalyzeCategory(key, category);
    if (!finding.functions.empty()) findings.push_back(std::move(finding));
  }
  std::sort(findings.begin(), findings.end(),
            [](const CategoryFinding& a, const CategoryFinding& b) { return a.flows > b.flows; });
  if (analyzed != nullptr) *analyzed = decomposed;
  return findings;
}

}  // namespace limpwatch::analyzer
