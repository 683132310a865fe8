// The run-time switch of the `slow-path` fault. The launcher writes the
// delay into <storage>/slow-path (or removes it) and sends SIGUSR1; the
// server reads the file again and acknowledges what it now does in
// <storage>/slow-path.state ("on DELAY_US" or "off"), which the launcher
// reads back as its evidence. A server starts with it off whatever the file
// says: the launcher's record names the processes it switched, and only
// those can be switched off again by a later `clear`.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_SLOW_PATH_SWITCH_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_SLOW_PATH_SWITCH_H_

#include <atomic>
#include <cstdint>
#include <string>

namespace limpwatch::testbed {

inline constexpr const char* kSlowPathControlFile = "slow-path";
inline constexpr const char* kSlowPathStateFile = "slow-path.state";

class SlowPathSwitch {
 public:
  explicit SlowPathSwitch(std::string storage_space) : storage_space_(std::move(storage_space)) {}

  // On SIGUSR1: reads the control file, switches, writes the state file and
  // logs the change.
  void Reload();
  // CPU microseconds each small-file create spends in the regression; 0: off.
  uint64_t create_delay_us() const { return create_delay_us_.load(std::memory_order_relaxed); }

 private:
  std::string storage_space_;
  std::atomic<uint64_t> create_delay_us_{0};
};

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_SLOW_PATH_SWITCH_H_
