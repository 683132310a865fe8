// Robust PCA by principal component pursuit (Candes, Li, Ma, Wright): a
// matrix M split into a low-rank part L and a sparse part E, M = L + E,
// solved by the inexact augmented Lagrange multiplier method (Lin, Chen, Ma).
//
// CloudDiag (seed 004) runs it on requests x methods latency matrices: what
// every row shares (the load, the request mix) lands in L, what only a few
// entries carry (one replica's slow method) lands in E.
//
// The singular value thresholding that dominates each iteration keeps only
// the singular values above the threshold. They are found by one step of
// subspace iteration per outer iteration, started from the previous
// iteration's right singular vectors (consecutive iterates differ little),
// with the rank predicted as Lin et al. do; small matrices take a full SVD.
#ifndef LIMPWATCH_ANALYZER_ROBUST_PCA_H_
#define LIMPWATCH_ANALYZER_ROBUST_PCA_H_

#include <Eigen/Dense>

namespace limpwatch::analyzer {

struct RobustPcaOptions {
  // Weight of the sparse part; 0 takes the value of the theory,
  // 1 / sqrt(max(rows, columns)), under which recovery is exact for
  // incoherent low-rank parts and randomly placed sparse errors.
  double lambda = 0;
  // Stop when ||M - L - E||_F <= tolerance * ||M||_F: E's entries are then
  // known to a ten-thousandth of the matrix's scale, far finer than any
  // decision made on them, and each further decade costs a quarter more
  // iterations.
  double tolerance = 1e-4;
  int max_iterations = 300;
};

struct RobustPca {
  Eigen::MatrixXd low_rank;  // L
  Eigen::MatrixXd sparse;    // E
  int rank = 0;              // of L
  int iterations = 0;
  bool converged = false;
  double relative_residual = 0;  // ||M - L - E||_F / ||M||_F at the end
};

// Decomposes `matrix`. An empty or all-zero matrix gives zero parts.
RobustPca DecomposeRobustPca(const Eigen::MatrixXd& matrix, const RobustPcaOptions& options = {});

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_ROBUST_PCA_H_
