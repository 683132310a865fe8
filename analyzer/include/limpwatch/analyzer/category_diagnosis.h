// CloudDiag per request category (seed 004), over the request flows of
// every server: each category's flows (rows, from all servers) against the
// functions of its call tree (columns, each the function's own time in the
// flow), decomposed by robust PCA (cloud_diag.h). A function whose column
// points away from its low-rank part is anomalous in the category; the rows
// carrying its slow sparse entries are the replicas where it is slow, and a
// server that holds most of them is the one it names, when so many of them
// falling on its flows is not chance: the hypergeometric chance of at least
// that many of the slow rows among its rows, were the slow rows any rows, is
// under alpha (one slow flow of fifteen names nobody).
//
// No training, no threshold of its own: the outlier fence is the columns'
// robust spread (cloud_diag.h), "most" is a majority, alpha the significance
// level `compare` tests at. CloudDiag first keeps
// only the categories whose latency is over-dispersed (coefficient of
// variation over a constant) to save work; at the sizes sampling gives here
// every category with enough flows is analyzed, and the CV is reported.
#ifndef LIMPWATCH_ANALYZER_CATEGORY_DIAGNOSIS_H_
#define LIMPWATCH_ANALYZER_CATEGORY_DIAGNOSIS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/cloud_diag.h"
#include "limpwatch/analyzer/flow_record.h"

namespace limpwatch::analyzer {

struct CategoryDiagnosisSettings {
  // A category needs this many flows, from at least two servers, before its
  // matrix says anything: robust PCA's sparse part is only sparse against
  // enough rows, and the fence needs a few columns to measure their spread.
  size_t least_flows = 30;
  size_t least_columns = 3;
  // The rows of one decomposition, at most: a category with more flows is
  // sampled evenly over its flows (the cost of a step grows with the rows).
  size_t most_rows = 2000;
  // Many columns of many categories are tested at once, as `compare` tests
  // a few hundred functions: the same level.
  double alpha = 0.001;
  CloudDiagOptions cloud_diag;
};

struct SlowFunction {
  uint64_t name_hash = 0;
  double beta = 1;  // cos(M_j, L_j)
  std::map<std::string, size_t> slow_flows;  // per server: its flows with a slow sparse entry here
  std::string server;  // the server holding most of the slow flows, beyond chance; empty when none does
  double p_value = 1;  // the chance of its share of them, were slow flows any flows
  uint64_t last_slow_unix_ms = 0;  // the end of the latest slow flow on `server`
};

struct CategoryFinding {
  uint64_t category = 0;
  FlowSample example;
  size_t flows = 0;  // rows analyzed
  std::map<std::string, size_t> flows_by_server;
  double cv = 0;  // of the category's latency
  std::vector<SlowFunction> functions;  // anomalous, lowest beta first
};

class CategoryDiagnosis {
 public:
  explicit CategoryDiagnosis(CategoryDiagnosisSettings settings = CategoryDiagnosisSettings()) : settings_(settings) {}

  void Add(const std::string& server, const FlowSample& flow);

  // The categories with anomalous functions, the most flows first; with
  // `analyzed` the number of categories decomposed.
  std::vector<CategoryFinding> Analyze(size_t* analyzed = nullptr) const;

 private:
  struct Row {
    uint32_t server = 0;
    uint64_t end_unix_ms = 0;
    double latency_ns = 0;
    std::unordered_map<uint64_t, double> self_ns;  // per function of the flow
  };
  struct Category {
    FlowSample example;
    std::vector<Row> rows;
  };

  CategoryFinding AnalyzeCategory(uint64_t key, const Category& category) const;

  CategoryDiagnosisSettings settings_;
  std::vector<std::string> servers_;
  std::map<uint64_t, Category> categories_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_CATEGORY_DIAGNOSIS_H_
