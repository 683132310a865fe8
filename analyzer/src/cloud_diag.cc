#include "limpwatch/analyzer/cloud_diag.h"

#include <algorithm>
#include <cmath>

#include "limpwatch/analyzer/statistics.h"

namespace limpwatch::analyzer {

double ColumnCosine(const Eigen::VectorXd& column, const Eigen::VectorXd& low_rank) {
  double column_norm = column.norm();
  if (column_norm == 0) return 1;
  double low_rank_norm = low_rank.norm();
  if (low_rank_norm == 0) return 0;
  return std::min(1.0, std::abs(column.dot(low_rank)) / (column_norm * low_rank_norm));
}

CloudDiagAnalysis AnalyzeLatencyMatrix(const Eigen::MatrixXd& latencies, const CloudDiagOptions& options) {
  CloudDiagAnalysis analysis;
  analysis.parts = DecomposeRobustPca(latencies, options.rpca);
  const auto columns = size_t(latencies.cols());
  analysis.beta.resize(columns);
  for (size_t column = 0; column < columns; ++column) {
    analysis.beta[column] = ColumnCosine(latencies.col(Eigen::Index(column)),
                                         analysis.parts.low_rank.col(Eigen::Index(column)));
  }
  if (columns == 0) return analysis;
  double median = Median(analysis.beta);
  double spread = std::max(RobustSpread(analysis.beta), 1.0 - median);
  analysis.beta_fence = median - options.outlier_sigmas * spread;
  // Principal component pursuit has no noise term: measurement noise lands
  // in E too, as many small entries. A replica is named by an entry further
  // above its low-rank value than any healthy column went (the
  // largest E / L of the columns that are not anomalous):
  // further than noise ever took a healthy function in these rows.
  const auto& low_rank = analysis.parts.low_rank;
  const auto& sparse = analysis.parts.sparse;
  auto excursion = [&](Eigen::Index row, Eigen::Index column) {
    double level = std::abs(low_rank(row, column));
    return level > 0 ? sparse(row, column) / level : (sparse(row, column) > 0 ? HUGE_VAL : 0.0);
  };
  std::vector<double> largest_excursions;
  for (size_t column = 0; column < columns; ++column) {
    if (analysis.beta[column] < analysis.beta_fence) continue;
    double largest = 0;
    for (Eigen::Index row = 0; row < latencies.rows(); ++row) {
      largest = std::max(largest, excursion(row, Eigen::Index(column)));
    }
    largest_excursions.push_back(largest);
  }
  analysis.excursion_fence =
      largest_excursions.empty() ? 0 : *std::max_element(largest_excursions.begin(), largest_excursions.end());
  for (size_t column = 0; column < columns; ++column) {
    if (!(analysis.beta[column] < analysis.beta_fence)) continue;
    AnomalousColumn anomalous{column, analysis.beta[column], {}};
    for (Eigen::Index row = 0; row < latencies.rows(); ++row) {
      if (sparse(row, Eigen::Index(column)) > 0 && excursion(row, Eigen::Index(column)) > analysis.excursion_fence) {
        anomalous.slow_rows.push_back(size_t(row));
      }
    }
    analysis.anomalous.push_back(std::move(anomalous));
  }
  std::sort(analysis.anomalous.begin(), analysis.anomalous.end(),
            [](const AnomalousColumn& a, const AnomalousColumn& b) { return a.beta < b.beta; });
  return analysis;
}

}  // namespace limpwatch::analyzer
