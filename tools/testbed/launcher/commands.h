// The subcommands of limpwatch-testbed. Each prints JSON lines on stdout and
// returns the exit status (0 ok, 1 failed, 2 bad usage, 130 interrupted).
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_COMMANDS_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_COMMANDS_H_

#include <string>

#include "common/command_line.h"
#include "launcher/fault.h"
#include "launcher/testbed_state.h"

namespace limpwatch::testbed::launcher {

int CommandStart(CommandLine* flags);
int CommandStop(CommandLine* flags);
int CommandStatus(CommandLine* flags);
int CommandRestartServer(CommandLine* flags);
int CommandRun(CommandLine* flags);
int CommandInject(CommandLine* flags);
int CommandClear(CommandLine* flags);
int CommandClearAll(CommandLine* flags);
int CommandFaults(CommandLine* flags);
int CommandProbe(CommandLine* flags);

// Shared by the commands.
int Fail(const std::string& command, const std::string& error, int status = 1);
bool RequireDir(CommandLine* flags, std::string* dir, std::string* error);
// The target of a fault: server `index` of the cluster in `state`.
bool TargetOf(TestbedState* state, uint32_t index, FaultTarget* target, std::string* error);
// Whether `name` is a fault of the whole cluster (Fault::cluster_wide).
bool IsClusterWideFault(const std::string& name);
// Clears one recorded fault and drops it from the state (caller holds the lock and saves).
bool ClearRecordedFault(TestbedState* state, uint64_t id, JsonLine* evidence, std::string* error);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_COMMANDS_H_
