// The I/O interposers' settings from the environment, read once at load
// (io_accounting.cc applies them):
//   LIMPWATCH_FD_TABLE_SIZE  16 to the table's entries: fds at or beyond it
//                            are classified on every call
//   LIMPWATCH_IO_TIMING      adaptive (the default) or every
// Reading only: no global is touched, so the fuzz target can call it.
#ifndef LIMPWATCH_HOOKS_SRC_IO_SETTINGS_H_
#define LIMPWATCH_HOOKS_SRC_IO_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::hooks {

struct IoSettings {
  uint32_t fd_table_size = 0;   // the table's entries unless the variable says fewer
  bool time_every_call = false;
};

inline constexpr uint32_t kMinFdTableSize = 16;

// `table_entries`: the size of the fd table. A value out of bounds or
// malformed is a problem (beginning with the variable's name) and its
// default is kept.
IoSettings ReadIoSettings(uint32_t table_entries, std::vector<std::string>* problems);

}  // namespace limpwatch::hooks

#endif  // LIMPWATCH_HOOKS_SRC_IO_SETTINGS_H_
