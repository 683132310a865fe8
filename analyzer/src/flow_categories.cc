#include "limpwatch/analyzer/flow_categories.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {
namespace {

// The canonical text of the subtree rooted at calls[index]; `next` is set
// past its last descendant.
// The canonical text of the subtree rooted at calls[index], each call
// written by `label`; `next` is set past its last descendant.
template <typename Label>
std::string Canonical(const std::vector<FlowCallTimes>& calls, size_t index, const Label& label, size_t* next) {
  std::vector<std::string> children;
  size_t child = index + 1;
  while (child < calls.size() && calls[child].depth > calls[index].depth) {
    children.push_back(Canonical(calls, child, label, &child));
  }
  *next = child;
  std::string text = label(calls[index]);
  if (children.empty()) return text;
  std::sort(children.begin(), children.end());
  text += '(';
  for (size_t first = 0; first < children.size();) {
    size_t last = first;
    while (last + 1 < children.size() && children[last + 1] == children[first]) ++last;
    if (first > 0) text += ',';
    text += children[first];
    if (last > first) text += '*';
    first = last + 1;
  }
  text += ')';
  return text;
}

std::string HashText(uint64_t hash) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace

std::string ShortFunctionName(const std::string& name) {
  // The parameter list: the first '(' outside template arguments.
  size_t end = name.size();
  int angle = 0;
  for (size_t index = 0; index < name.size(); ++index) {
    if (name[index] == '<') ++angle;
    if (name[index] == '>' && angle > 0) --angle;
    if (name[index] == '(' && angle == 0 && index > 0) {
      end = index;
      break;
    }
  }
  std::string bare = name.substr(0, end);
  // The last two scopes, counting "::" outside template arguments only.
  size_t cut = 0;
  int scopes = 0;
  angle = 0;
  for (size_t index = bare.size(); index-- > 1;) {
    if (bare[index] == '>') ++angle;
    if (bare[index] == '<' && angle > 0) --angle;
    if (angle == 0 && bare[index] == ':' && bare[index - 1] == ':' && ++scopes == 2) {
      cut = index + 1;
      break;
    }
  }
  return bare.substr(cut);
}

CategorizedFlow CategorizeFlow(const FlowSample& flow, const FlowFunctionNamer& name_of) {
  CategorizedFlow result;
  result.calls.resize(flow.calls.size());
  for (size_t index = 0; index < flow.calls.size(); ++index) {
    const FlowCallRecord& call = flow.calls[index];
    FlowCallTimes& times = result.calls[index];
    times.name_hash = call.name_hash;
    times.depth = call.depth;
    times.function = name_of(call.name_hash);
    if (times.function.empty()) times.function = "#" + HashText(call.name_hash);
    times.total_ns = double(call.duration_ns);
    times.self_ns = times.total_ns;
  }
  // Each call's time leaves its parent's self time: the nearest earlier call one level up.
  std::vector<size_t> open;
  for (size_t index = 0; index < result.calls.size(); ++index) {
    while (!open.empty() && result.calls[open.back()].depth >= result.calls[index].depth) open.pop_back();
    if (!open.empty()) result.calls[open.back()].self_ns -= result.calls[index].total_ns;
    open.push_back(index);
  }
  for (FlowCallTimes& times : result.calls) times.self_ns = std::max(0.0, times.self_ns);
  if (!result.calls.empty()) {
    size_t next = 0;
    result.structure = Canonical(result.calls, 0, [](const FlowCallTimes& call) { return call.function; }, &next);
    result.display = Canonical(
        result.calls, 0, [](const FlowCallTimes& call) { return ShortFunctionName(call.function); }, &next);
    // The key is written with name hashes, so that it never depends on which
    // names a reader has.
    std::string key =
        Canonical(result.calls, 0, [](const FlowCallTimes& call) { return HashText(call.name_hash); }, &next);
    if (flow.cut) key += " [cut]";
    result.category = shm::FunctionNameHash(key);
    result.latency_ns = result.calls[0].total_ns;
  }
  if (flow.cut) {
    result.structure += " [cut]";
    result.display += " [cut]";
  }
  return result;
}

double FlowCategory::cv() const {
  if (count < 2 || mean_ns <= 0) return 0;
  return std::sqrt(variance_ns2) / mean_ns;
}

void FlowCategories::Add(const CategorizedFlow& flow) {
  if (flow.calls.empty()) return;
  FlowCategory& category = categories_[flow.category];
  if (category.count == 0) {
    category.category = flow.category;
    category.structure = flow.structure;
    category.display = flow.display;
    category.root = flow.calls[0].function;
  }
  // Welford's update: one pass, no cancellation on long runs.
  ++category.count;
  double delta = flow.latency_ns - category.mean_ns;
  category.mean_ns += delta / double(category.count);
  double m2 = category.variance_ns2 * double(category.count > 2 ? category.count - 2 : 0);
  m2 += delta * (flow.latency_ns - category.mean_ns);
  category.variance_ns2 = category.count > 1 ? m2 / double(category.count - 1) : 0;
  for (const FlowCallTimes& call : flow.calls) category.self_ns[call.function] += call.self_ns;
  category.latencies_ns.push_back(flow.latency_ns);
  ++flows_;
}

std::vector<const FlowCategory*> FlowCategories::ByCount() const {
  std::vector<const FlowCategory*> ordered;
  for (const auto& [key, category] : categories_) ordered.push_back(&category);
  std::sort(ordered.begin(), ordered.end(), [](const FlowCategory* a, const FlowCategory* b) {
    if (a->count != b->count) return a->count > b->count;
    return a->structure < b->structure;
  });
  return ordered;
}

}  // namespace limpwatch::analyzer
