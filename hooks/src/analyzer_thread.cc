// Starts the analyzer inside the server when LIMPWATCH_ANALYZE=1.
//
// The analyzer runs on a thread of its own (not the runtime's service
// thread: a slow comparison must not delay names or node metrics), started
// with every signal blocked and at the lowest priority. A PVFS server
// daemonizes with fork() and its parent exits, so the thread is started
// again in the child, which analyzes the child's own segment.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "limpwatch/analyzer/analyzer_loop.h"
#include "limpwatch/analyzer/inherited_descriptors.h"
#include "limpwatch/analyzer/transport_exchange.h"
#include "process.h"
#include "thread_state.h"

namespace limpwatch::hooks {
namespace {

constinit std::atomic<uint64_t> g_analyzer_epoch{0};

uint64_t RealtimeMs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
}

std::string NodeName() {
  const char* name = std::getenv("LIMPWATCH_NAME");
  if (name != nullptr && name[0] != '\0') return name;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "-" + std::to_string(getpid());
}

void Log(const std::string& line) { runtime::LogLine(line); }

void* AnalyzerThreadMain(void* argument) {
  runtime::ThreadState& thread = runtime::t_thread;
  thread.in_hook = 1;  // nothing on this thread is traced
  thread.status = runtime::ThreadStatus::kIgnored;
  uint64_t epoch = reinterpret_cast<uint64_t>(argument);
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
  try {
    std::string node = NodeName();
    analyzer::AnalyzerSetup setup = analyzer::AnalyzerSetupFromEnvironment(node, Log);
    std::vector<std::string> problems;
    auto transport = analyzer::PeerTransport::CreateFromEnvironment(&problems);
    for (const auto& problem : problems) Log("analyzer: " + problem);
    if (transport) {
      setup.exchange = analyzer::MakeTransportExchange(std::move(transport), Log);
    } else if (problems.empty()) {
      Log("analyzer: no peers configured (LIMPWATCH_PEERS or LIMPWATCH_PVFS_CONFIG); comparing nothing");
    } else {
      Log("analyzer: no exchange with the peers (the line above says why); checking this server alone");
    }
    analyzer::AnalyzerLoop loop(std::move(setup));
    while (g_analyzer_epoch.load(std::memory_order_acquire) == epoch) {
      uint64_t now = RealtimeMs();
      uint64_t next = loop.NextTickUnixMs(now);
      timespec pause{time_t((next - now) / 1000), long((next - now) % 1000) * 1000000L};
      nanosleep(&pause, nullptr);
      if (g_analyzer_epoch.load(std::memory_order_acquire) != epoch) break;
      const shm::SegmentView& segment = runtime::CurrentSegmentView();
      std::string object = shm::SegmentObjectName(segment.header()->name, pid_t(segment.header()->owner_pid));
      loop.Tick(segment, object, true);
    }
  } catch (const std::exception& error) {
    Log(std::string("analyzer: stopped: ") + error.what() + "; the server runs on untouched");
  } catch (...) {
    Log("analyzer: stopped after an unknown error; the server runs on untouched");
  }
  return nullptr;
}

void StartAnalyzerThread() {
  if (!runtime::EnsureProcessInitialized()) return;
  uint64_t epoch = g_analyzer_epoch.fetch_add(1, std::memory_order_acq_rel) + 1;
  int result = runtime::StartQuietThread("limpwatch-anlz", AnalyzerThreadMain, reinterpret_cast<void*>(epoch));
  if (result != 0) Log(std::string("analyzer: cannot start its thread: ") + std::strerror(result));
}

bool AnalyzerWanted() {
  const char* setting = std::getenv("LIMPWATCH_ANALYZE");
  return setting != nullptr && (!std::strcmp(setting, "1") || !std::strcmp(setting, "yes"));
}

// Registered after the runtime's own fork handler (constructor order), so
// the child's segment exists when its analyzer starts. The parent's analyzer
// thread does not exist here, but its socket and rings do: closed first, so
// the child can bind the peer port once the parent lets go of it.
void StartAnalyzerInChild() {
  analyzer::CloseInheritedAnalyzerDescriptors();
  StartAnalyzerThread();
}

[[gnu::constructor(102)]] void StartAnalyzerWhenAsked() {
  runtime::ThreadState& thread = runtime::t_thread;
  uint32_t saved_guard = thread.in_hook;
  thread.in_hook = 1;
  int saved_errno = errno;
  if (AnalyzerWanted()) {
    pthread_atfork(nullptr, nullptr, StartAnalyzerInChild);
    StartAnalyzerThread();
  }
  errno = saved_errno;
  thread.in_hook = saved_guard;
}

[[gnu::destructor(101)]] void StopAnalyzer() { g_analyzer_epoch.fetch_add(1, std::memory_order_acq_rel); }

}  // namespace
}  // namespace limpwatch::hooks
