// The fallback sampler when perf events are refused: a POSIX timer on the
// process's CPU clock sends SIGPROF, and the handler records the interrupted
// user-space instruction pointer (from the ucontext) into a lock-free ring
// that the service task drains.
//
// Why a process CPU-time timer: it covers every thread, those started later
// included, with no per-thread set-up; the kernel delivers the signal to a
// thread that is using the CPU, so samples fall where the CPU time goes. Its
// resolution is the scheduler tick (CONFIG_HZ). Kernel time shows up in the
// system-call wrapper that entered the kernel: no kernel names here.
//
// Coexistence: our timer's signals are told apart by si_code == SI_TIMER and
// their si_value; every other SIGPROF goes to the handler that was installed
// before ours (or gets its default action), so a program that profiles itself
// with setitimer(ITIMER_PROF) keeps working. A program that installs its own
// SIGPROF handler after us would receive our ticks: the sampler checks every
// service tick and stops its timer when the handler is no longer ours.
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_SIGPROF_SAMPLING_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_SIGPROF_SAMPLING_H_

#include <cstdint>
#include <functional>
#include <string>

namespace limpwatch::runtime {

// Installs the handler (once) and starts the timer. Returns false with a
// one-line *error (and nothing running) on failure.
bool StartSigprofSampling(uint32_t rate_hz, std::string* error);

// Deletes the timer. The handler stays: a signal already pending must not
// meet the default action, which would end the program.
void StopSigprofSampling();

// True while the process's SIGPROF handler is ours.
bool SigprofHandlerIsOurs();

// Passes every recorded instruction pointer to `visit`, oldest first.
size_t DrainSigprofSamples(const std::function<void(uint64_t ip)>& visit);

// Samples dropped because the ring was full, since the last call.
uint64_t TakeSigprofSamplesLost();

// In a forked child (one thread, no timer: POSIX timers are not inherited):
// empties the ring of the parent's samples and starts a timer of its own.
bool RestartSigprofSamplingInChild(uint32_t rate_hz, std::string* error);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_SIGPROF_SAMPLING_H_
