// Request categories (seed 004: Spectroscope, CloudDiag): sampled flows
// grouped by the structure of their call tree, with each category's count,
// latency mean and variance, and time per function.
//
// A flow's structure is its tree written depth first, each function by name,
// a node's children sorted, so that calls issued in parallel or in a varying
// order do not multiply categories, and a run of identical sibling subtrees
// written once, marked '*', so that a loop of 3 or of 30 reads is one
// category (its cost shows in the latency, where the CV can see it). A flow
// cut at its ring's bound has an incomplete tree and its own category,
// marked " [cut]". Name hashes, not per-process function ids, make a
// category the same on every server and in every run of a program.
#ifndef LIMPWATCH_ANALYZER_FLOW_CATEGORIES_H_
#define LIMPWATCH_ANALYZER_FLOW_CATEGORIES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/flow_record.h"

namespace limpwatch::analyzer {

// The name of a function by its name hash ("" when unknown: the call is
// written as "#<hash>").
using FlowFunctionNamer = std::function<std::string(uint64_t name_hash)>;

// One call of a flow with its name and times in ns.
struct FlowCallTimes {
  std::string function;
  uint64_t name_hash = 0;
  uint32_t depth = 0;
  double total_ns = 0;
  double self_ns = 0;  // total less its recorded children's
};

// A name for reading: a C++ name without its parameter list and with only
// its last two scopes (ns::Class::f(int) -> Class::f); a C name as it is.
std::string ShortFunctionName(const std::string& name);

struct CategorizedFlow {
  std::string structure;
  std::string display;  // the structure with ShortFunctionName's names: for reading, not a key
  // FNV-1a of the structure written with name hashes: the same whatever
  // names a reader has (a function not named yet is still itself).
  uint64_t category = 0;
  double latency_ns = 0;  // the root's
  std::vector<FlowCallTimes> calls;  // in the flow's order
};

CategorizedFlow CategorizeFlow(const FlowSample& flow, const FlowFunctionNamer& name_of);

struct FlowCategory {
  uint64_t category = 0;
  std::string structure;
  std::string display;
  std::string root;
  uint64_t count = 0;
  double mean_ns = 0;
  double variance_ns2 = 0;  // sample variance (n - 1); 0 for one flow
  std::map<std::string, double> self_ns;  // per function: summed over the category's flows
  std::vector<double> latencies_ns;       // every flow's, in arrival order

  // Coefficient of variation of the latency (CloudDiag's over-dispersion
  // test); 0 for fewer than two flows.
  double cv() const;
};

class FlowCategories {
 public:
  void Add(const CategorizedFlow& flow);
  // Most flows first, then by structure.
  std::vector<const FlowCategory*> ByCount() const;
  const std::map<uint64_t, FlowCategory>& all() const { return categories_; }
  uint64_t flows() const { return flows_; }

 private:
  std::map<uint64_t, FlowCategory> categories_;
  uint64_t flows_ = 0;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_FLOW_CATEGORIES_H_
