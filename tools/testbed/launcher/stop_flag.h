// Ctrl-C and SIGTERM for the launcher: the handler only sets a flag; every
// loop and wait checks it, so whatever the launcher set up is undone before
// it exits (never left behind by an interrupted command).
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_STOP_FLAG_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_STOP_FLAG_H_

namespace limpwatch::testbed::launcher {

void InstallStopHandlers();
bool StopRequested();
// Sleeps up to `milliseconds`; false if a stop was requested meanwhile.
bool SleepUnlessStopped(int milliseconds);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_STOP_FLAG_H_
