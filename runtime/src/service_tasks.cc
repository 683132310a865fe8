#include "service_tasks.h"

#include <atomic>
#include <exception>
#include <string>

#include "process.h"

namespace limpwatch::runtime {
namespace {

struct TaskEntry {
  const char* name;
  ServiceTask task;
  uint32_t period_ms;
  void (*on_fork_child)();
  uint64_t next_due_ns;
  bool disabled;
};

// Plain arrays: registration happens in constructors, before any dynamic
// initialisation could be relied upon.
constinit TaskEntry g_tasks[kMaxServiceTasks] = {};
constinit std::atomic<int> g_task_count{0};

}  // namespace

bool RegisterServiceTask(const char* name, ServiceTask task, uint32_t period_ms) {
  int index = g_task_count.load(std::memory_order_acquire);
  if (index >= kMaxServiceTasks) return false;
  g_tasks[index] = TaskEntry{name, task, period_ms == 0 ? 1 : period_ms, nullptr, 0, false};
  g_task_count.store(index + 1, std::memory_order_release);
  return true;
}

bool RegisterServiceTaskForkHandler(ServiceTask task, void (*on_fork_child)()) {
  int count = g_task_count.load(std::memory_order_acquire);
  for (int index = 0; index < count; ++index) {
    if (g_tasks[index].task == task) {
      g_tasks[index].on_fork_child = on_fork_child;
      return true;
    }
  }
  return false;
}

void RunDueServiceTasks(const shm::SegmentView& segment, uint64_t now_ns, bool run_all) {
  int count = g_task_count.load(std::memory_order_acquire);
  for (int index = 0; index < count; ++index) {
    TaskEntry& entry = g_tasks[index];
    if (entry.disabled || (!run_all && now_ns < entry.next_due_ns)) continue;
    entry.next_due_ns = now_ns + uint64_t{entry.period_ms} * 1000000ull;
    try {
      entry.task(segment, now_ns);
    } catch (const std::exception& error) {
      entry.disabled = true;
      LogLine(std::string("service task '") + entry.name + "' failed and is disabled: " + error.what());
    } catch (...) {
      entry.disabled = true;
      LogLine(std::string("service task '") + entry.name + "' failed and is disabled");
    }
  }
}

void ResetServiceTasksInChild() {
  int count = g_task_count.load(std::memory_order_acquire);
  for (int index = 0; index < count; ++index) {
    g_tasks[index].next_due_ns = 0;
    if (g_tasks[index].on_fork_child != nullptr) g_tasks[index].on_fork_child();
  }
}

}  // namespace limpwatch::runtime
