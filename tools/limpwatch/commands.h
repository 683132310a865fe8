// The sub-commands of `limpwatch`. Each takes the words after its own name and
// returns the process exit status.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_COMMANDS_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_COMMANDS_H_

#include <string>
#include <vector>

namespace limpwatch::cli {

// Scripts tell "the segment is broken" (1) from "you called me wrong" (2).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

int RunList(const std::vector<std::string>& args);
int RunTop(const std::vector<std::string>& args);
int RunDump(const std::vector<std::string>& args);
int RunClean(const std::vector<std::string>& args);
int RunAlarms(const std::vector<std::string>& args);
int RunAnalyze(const std::vector<std::string>& args);
int RunTrain(const std::vector<std::string>& args);
int RunDiagnose(const std::vector<std::string>& args);
int RunReport(const std::vector<std::string>& args);
int RunExport(const std::vector<std::string>& args);
int RunCompare(const std::vector<std::string>& args);
int RunFlows(const std::vector<std::string>& args);
int RunSelect(const std::vector<std::string>& args);
int RunServe(const std::vector<std::string>& args);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_COMMANDS_H_
