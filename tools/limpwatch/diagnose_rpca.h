// `limpwatch diagnose --rpca FILES...`: the untrained rpca detector
// (analyzer/rpca_detector.h) over the recordings of several servers.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_DIAGNOSE_RPCA_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_DIAGNOSE_RPCA_H_

#include <string>
#include <vector>

#include "limpwatch/analyzer/analyzer_config.h"

namespace limpwatch::cli {

struct RpcaCommand {
  std::vector<std::string> paths;
  const std::string* manifest = nullptr;  // function-to-resource manifest, if any
  analyzer::AnalyzerConfig config;
  bool json = false;
  bool steps = false;  // one line per step with its votes
};

int DiagnoseRpca(const RpcaCommand& command);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_DIAGNOSE_RPCA_H_
