// The untrained rpca detector (analyzer/rpca_detector.h) scored on the same
// experiments as the servers' own peer comparison: its alarms come from
// replaying each experiment's recordings, so both are judged on one run.
#ifndef LIMPWATCH_TOOLS_EVAL_RPCA_SCORING_H_
#define LIMPWATCH_TOOLS_EVAL_RPCA_SCORING_H_

#include <string>
#include <vector>

#include "scoring.h"

namespace limpwatch::eval {

// Copies of `experiments` whose alarms are the rpca detector's over the
// recordings in `out`/experiment-<index>. Unreadable recordings are
// reported in *problems (one line each) and leave that experiment without
// alarms.
std::vector<Experiment> RpcaExperiments(const std::vector<Experiment>& experiments, const std::string& out,
                                        const std::string& manifest_path, std::vector<std::string>* problems);

}  // namespace limpwatch::eval

#endif  // LIMPWATCH_TOOLS_EVAL_RPCA_SCORING_H_
