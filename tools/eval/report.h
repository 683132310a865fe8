// The evaluation's outputs: the accuracy table (text) and the same as JSON.
// The HTML page is `limpwatch report`'s (tools/limpwatch/report/).
#ifndef LIMPWATCH_TOOLS_EVAL_REPORT_H_
#define LIMPWATCH_TOOLS_EVAL_REPORT_H_

#include <map>
#include <string>
#include <vector>

#include "scoring.h"

namespace limpwatch::eval {

std::string RenderTable(const std::map<std::string, ClassScore>& classes);
std::string RenderJson(const std::vector<Experiment>& experiments, const std::map<std::string, ClassScore>& classes,
                       uint64_t grace_ms);

}  // namespace limpwatch::eval

#endif  // LIMPWATCH_TOOLS_EVAL_REPORT_H_
