#include "patching/sled_trap.h"

#include <signal.h>
#include <ucontext.h>

#include <algorithm>

#include "patching/call_site_table.h"
#include "patching/sled_bytes.h"
#include "signal_forwarding.h"
#include "thread_state.h"

namespace limpwatch::runtime::patching {
namespace {

constinit const uint64_t* g_sleds = nullptr;
constinit size_t g_sled_count = 0;
struct sigaction g_previous_action;
constinit bool g_installed = false;

// What would have happened to a signal that is not ours.
LW_NO_INSTRUMENT void Forward(int signal_number, siginfo_t* info, void* context) {
  ForwardToPreviousHandler(g_previous_action, signal_number, info, context);
}

LW_NO_INSTRUMENT void OnSigtrap(int signal_number, siginfo_t* info, void* context) {
  auto* machine = context != nullptr ? &static_cast<ucontext_t*>(context)->uc_mcontext : nullptr;
  if (machine != nullptr) {
    uint64_t trap_address = static_cast<uint64_t>(machine->gregs[REG_RIP]) - 1;
    HookKind kind = HookKind::kEnter;
    if (std::binary_search(g_sleds, g_sleds + g_sled_count, trap_address) ||
        (IsRewrittenCallSite(trap_address, &kind) && kind != HookKind::kTailExit)) {
      machine->gregs[REG_RIP] = static_cast<greg_t>(trap_address + kSledSize);
      return;
    }
    if (IsRewrittenCallSite(trap_address, &kind)) {
      // `jmp` to the exit hook or `ret`: either way the function returns.
      auto* stack = reinterpret_cast<const uint64_t*>(machine->gregs[REG_RSP]);
      machine->gregs[REG_RIP] = static_cast<greg_t>(*stack);
      machine->gregs[REG_RSP] += sizeof(uint64_t);
      return;
    }
  }
  Forward(signal_number, info, context);
}

}  // namespace

bool InstallSledTrapHandler(std::vector<uint64_t> sleds) {
  if (g_installed || g_sleds != nullptr) return false;
  std::sort(sleds.begin(), sleds.end());
  auto* table = new uint64_t[sleds.size() + 1];
  std::copy(sleds.begin(), sleds.end(), table);
  g_sleds = table;
  g_sled_count = sleds.size();
  struct sigaction action {};
  action.sa_sigaction = OnSigtrap;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGTRAP, &action, &g_previous_action) != 0) return false;
  g_installed = true;
  return true;
}

bool EnsureSledTrapHandler() { return g_installed || InstallSledTrapHandler({}); }

bool SledTrapHandlerInPlace() {
  if (!g_installed) return false;
  struct sigaction current {};
  if (sigaction(SIGTRAP, nullptr, &current) != 0) return false;
  return (current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == OnSigtrap;
}

}  // namespace limpwatch::runtime::patching
