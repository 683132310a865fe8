#include "limpwatch/analyzer/robust_pca.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace limpwatch::analyzer {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Below this many columns (or rows) a full SVD is cheaper than tracking a
// subspace, and exact.
constexpr Eigen::Index kFullSvdBelow = 48;
// Extra directions kept beyond the predicted rank, so that a singular value
// that rises above the threshold is caught by the next iteration's subspace.
constexpr Eigen::Index kOversampling = 6;

MatrixXd OrthonormalColumns(const MatrixXd& columns) {
  Eigen::HouseholderQR<MatrixXd> qr(columns);
  return qr.householderQ() * MatrixXd::Identity(columns.rows(), columns.cols());
}

// The largest singular value, by power iteration on M^T M; to a part in a
// hundred, enough for a step size.
double LargestSingularValue(const MatrixXd& matrix) {
  VectorXd vector = VectorXd::Ones(matrix.cols()) / std::sqrt(double(matrix.cols()));
  double previous = 0;
  double value = 0;
  for (int step = 0; step < 30; ++step) {
    VectorXd image = matrix.transpose() * (matrix * vector);
    double norm = image.norm();
    if (norm == 0) return 0;
    vector = image / norm;
    value = std::sqrt(norm);
    if (std::abs(value - previous) <= 1e-2 * value) break;
    previous = value;
  }
  return value;
}

// Singular value thresholding: the matrix with each singular value s
// replaced by max(s - tau, 0). Tracks the leading right singular subspace
// across calls.
class SingularValueThresholder {
 public:
  SingularValueThresholder(Eigen::Index rows, Eigen::Index columns)
      : full_(std::min(rows, columns) < kFullSvdBelow),
        width_(std::min<Eigen::Index>(std::min(rows, columns), 10 + kOversampling)) {}

  int Apply(const MatrixXd& matrix, double tau, MatrixXd* out) {
    if (full_) return ApplyFull(matrix, tau, out);
    const Eigen::Index limit = std::min(matrix.rows(), matrix.cols());
    GrowBasis(matrix.cols());
    // One step of subspace iteration from the previous right vectors: the
    // range of M V, then M's restriction to it. The three products run in
    // single precision, twice the lanes of double: their rounding (1e-7) is
    // far below the stopping tolerance, and the small SVD stays in double.
    single_.resize(matrix.rows(), matrix.cols());
    single_ = matrix.cast<float>();
    product_.resize(matrix.rows(), basis_.cols());
    product_.noalias() = single_ * basis_.cast<float>();
    Eigen::MatrixXf left = OrthonormalColumns(product_.cast<double>()).cast<float>();
    MatrixXd reduced = (left.transpose() * single_).cast<double>();  // width x columns
    Eigen::BDCSVD<MatrixXd> svd(reduced, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const VectorXd& values = svd.singularValues();
    Eigen::Index kept = 0;
    while (kept < values.size() && values[kept] > tau) ++kept;
    basis_ = svd.matrixV();
    if (kept == 0) {
      out->setZero(matrix.rows(), matrix.cols());
    } else {
      Eigen::MatrixXf scaled_left =
          left * (svd.matrixU().leftCols(kept) * (values.head(kept).array() - tau).matrix().asDiagonal())
                     .cast<float>();
      product_.resize(matrix.rows(), matrix.cols());
      product_.noalias() = scaled_left * svd.matrixV().leftCols(kept).transpose().cast<float>();
      *out = product_.cast<double>();
    }
    // Lin et al.'s rank prediction: every value kept means more may lie
    // beyond the subspace, so widen it; otherwise keep a margin over the rank.
    Eigen::Index next = kept >= width_ ? std::min(limit, width_ + std::max<Eigen::Index>(kOversampling, limit / 20))
                                       : std::min(limit, kept + kOversampling);
    width_ = std::max<Eigen::Index>(next, 1);
    return int(kept);
  }

 private:
  int ApplyFull(const MatrixXd& matrix, double tau, MatrixXd* out) {
    Eigen::BDCSVD<MatrixXd> svd(matrix, Eigen::ComputeThinU | Eigen::ComputeThinV);
    const VectorXd& values = svd.singularValues();
    Eigen::Index kept = 0;
    while (kept < values.size() && values[kept] > tau) ++kept;
    if (kept == 0) {
      out->setZero(matrix.rows(), matrix.cols());
      return 0;
    }
    *out = svd.matrixU().leftCols(kept) * (values.head(kept).array() - tau).matrix().asDiagonal() *
           svd.matrixV().leftCols(kept).transpose();
    return int(kept);
  }

  // The basis gets width_ columns: the tracked ones first, then fixed
  // pseudo-random directions (the same on every run, so results repeat).
  void GrowBasis(Eigen::Index columns) {
    if (basis_.rows() == columns && basis_.cols() == width_) return;
    MatrixXd grown(columns, width_);
    Eigen::Index reused = std::min(basis_.cols(), width_);
    if (basis_.rows() == columns && reused > 0) grown.leftCols(reused) = basis_.leftCols(reused);
    else reused = 0;
    std::mt19937_64 random(0x6c696d70u + uint64_t(width_));
    std::normal_distribution<double> normal;
    for (Eigen::Index column = reused; column < width_; ++column) {
      for (Eigen::Index row = 0; row < columns; ++row) grown(row, column) = normal(random);
    }
    basis_ = OrthonormalColumns(grown);
  }

  bool full_;
  Eigen::Index width_;
  MatrixXd basis_;
  Eigen::MatrixXf single_;   // the matrix, in single precision
  Eigen::MatrixXf product_;
};

}  // namespace

RobustPca DecomposeRobustPca(const MatrixXd& matrix, const RobustPcaOptions& options) {
  RobustPca result;
  result.low_rank.setZero(matrix.rows(), matrix.cols());
  result.sparse.setZero(matrix.rows(), matrix.cols());
  const double norm_fro = matrix.norm();
  if (matrix.size() == 0 || norm_fro == 0 || !std::isfinite(norm_fro)) {
    result.converged = matrix.size() == 0 || norm_fro == 0;
    return result;
  }
  const double lambda =
      options.lambda > 0 ? options.lambda : 1.0 / std::sqrt(double(std::max(matrix.rows(), matrix.cols())));
  const double norm_two = LargestSingularValue(matrix);
  const double norm_inf = matrix.cwiseAbs().maxCoeff() / lambda;
  // The dual variable starts feasible for the dual problem, and the penalty
  // grows geometrically, as in Lin et al.'s inexact ALM.
  MatrixXd dual = matrix / std::max(norm_two, norm_inf);
  double mu = 1.25 / norm_two;
  const double mu_limit = mu * 1e7;
  const double rho = 1.5;

  SingularValueThresholder thresholder(matrix.rows(), matrix.cols());
  MatrixXd& low_rank = result.low_rank;
  MatrixXd& sparse = result.sparse;
  // The element-wise steps run as two fused passes over preallocated
  // buffers: at 2,000 x 200 each temporary is 3 MB, and allocating, zeroing
  // and faulting it in cost as much as the products.
  MatrixXd work(matrix.rows(), matrix.cols());
  const Eigen::Index size = matrix.size();
  const double* m = matrix.data();
  double* y = dual.data();
  double* w = work.data();
  double* e = sparse.data();
  for (int iteration = 1; iteration <= options.max_iterations; ++iteration) {
    const double inverse_mu = 1.0 / mu;
    for (Eigen::Index i = 0; i < size; ++i) w[i] = m[i] - e[i] + y[i] * inverse_mu;
    result.rank = thresholder.Apply(work, inverse_mu, &low_rank);
    const double* l = low_rank.data();
    const double shrink = lambda * inverse_mu;
    double residual = 0;
    for (Eigen::Index i = 0; i < size; ++i) {
      double value = m[i] - l[i] + y[i] * inverse_mu;
      e[i] = value - std::clamp(value, -shrink, shrink);  // soft threshold, branch-free so it vectorizes
      double gap = m[i] - l[i] - e[i];
      y[i] += mu * gap;
      residual += gap * gap;
    }
    mu = std::min(mu * rho, mu_limit);
    result.iterations = iteration;
    result.relative_residual = std::sqrt(residual) / norm_fro;
    if (result.relative_residual <= options.tolerance) {
      result.converged = true;
      break;
    }
  }
  return result;
}

}  // namespace limpwatch::analyzer
