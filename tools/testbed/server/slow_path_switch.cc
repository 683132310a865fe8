#include "server/slow_path_switch.h"

#include <cstdio>
#include <fstream>

#include "server/server_log.h"

namespace limpwatch::testbed {
namespace {

// At most a second per create: a typo in the control file must not wedge
// every worker of every server.
constexpr uint64_t kMaxDelayUs = 1000000;

}  // namespace

void SlowPathSwitch::Reload() {
  uint64_t delay_us = 0;
  std::ifstream control(storage_space_ + "/" + kSlowPathControlFile);
  if (control && !(control >> delay_us)) delay_us = 0;
  if (delay_us > kMaxDelayUs) delay_us = kMaxDelayUs;
  uint64_t before = create_delay_us_.exchange(delay_us, std::memory_order_relaxed);

  // Written aside and renamed, so the launcher never reads half a state.
  std::string state_path = storage_space_ + "/" + kSlowPathStateFile;
  std::string temporary = state_path + ".tmp";
  {
    std::ofstream state(temporary, std::ios::trunc);
    state << (delay_us > 0 ? "on " + std::to_string(delay_us) : std::string("off")) << "\n";
  }
  if (std::rename(temporary.c_str(), state_path.c_str()) != 0) LogLine("slow path: cannot write " + state_path);
  if (before != delay_us) {
    LogLine(delay_us > 0 ? "slow path on: every small-file create spins " + std::to_string(delay_us) + " us"
                         : std::string("slow path off"));
  }
}

}  // namespace limpwatch::testbed
