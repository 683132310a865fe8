// CloudDiag's analysis of one latency matrix (seed 004): rows are requests
// (here: one server's tick), columns are methods (functions), each entry the
// method's latency in that row. Robust PCA splits it into what the rows
// share and what only a few entries carry; a column that points away from
// its low-rank part is an anomalous method, and its sparse entries name the
// rows (replicas) where it is.
#ifndef LIMPWATCH_ANALYZER_CLOUD_DIAG_H_
#define LIMPWATCH_ANALYZER_CLOUD_DIAG_H_

#include <cstddef>
#include <vector>

#include <Eigen/Dense>

#include "limpwatch/analyzer/robust_pca.h"

namespace limpwatch::analyzer {

struct CloudDiagOptions {
  RobustPcaOptions rpca;
  // How far below the columns' usual cosine an anomalous column lies, in
  // robust standard deviations of the cosines (median absolute deviation
  // x 1.4826): the conventional three-sigma outlier fence.
  double outlier_sigmas = 3.0;
};

struct AnomalousColumn {
  size_t column = 0;
  double beta = 1;                // cos(M_j, L_j)
  // Rows whose sparse entry is positive (slower than the pattern) and, over
  // its low-rank value, further than excursion_fence.
  std::vector<size_t> slow_rows;
};

struct CloudDiagAnalysis {
  RobustPca parts;
  std::vector<double> beta;                // per column
  double beta_fence = 0;                   // a column under it is anomalous
  double excursion_fence = 0;              // the largest E / L of the healthy columns
  std::vector<AnomalousColumn> anomalous;  // lowest cosine first
};

// CloudDiag's cosine of a column and its low-rank part: |M_j . L_j| /
// (|M_j| |L_j|); 0 when the low-rank part of the column is zero (the whole
// column is sparse), 1 when the column itself is zero.
double ColumnCosine(const Eigen::VectorXd& column, const Eigen::VectorXd& low_rank);

// Decomposes `latencies` and flags its anomalous columns. The fence is the
// median cosine less outlier_sigmas robust deviations, and never closer to 1
// than the median column's own distance from 1 times outlier_sigmas: with
// every column explained almost exactly, rounding would otherwise be flagged.
CloudDiagAnalysis AnalyzeLatencyMatrix(const Eigen::MatrixXd& latencies, const CloudDiagOptions& options = {});

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_CLOUD_DIAG_H_
