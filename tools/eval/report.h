// The evaluation's outputs: the accuracy table (text), the same as JSON, and
// an HTML page with per-server plots of each experiment.
#ifndef LIMPWATCH_TOOLS_EVAL_REPORT_H_
#define LIMPWATCH_TOOLS_EVAL_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "limpwatch/analyzer/tick_record.h"
#include "scoring.h"

namespace limpwatch::eval {

std::string RenderTable(const std::map<std::string, ClassScore>& classes);
std::string RenderJson(const std::vector<Experiment>& experiments, const std::map<std::string, ClassScore>& classes,
                       uint64_t grace_ms);

// One experiment's recordings (server -> ticks), plotted with its fault
// window and alarms.
struct PlottedExperiment {
  const Experiment* experiment = nullptr;
  std::map<std::string, std::vector<analyzer::TickRecord>> ticks;
};
std::string RenderHtml(const std::vector<PlottedExperiment>& experiments, const std::map<std::string, ClassScore>& classes);

}  // namespace limpwatch::eval

#endif  // LIMPWATCH_TOOLS_EVAL_REPORT_H_
