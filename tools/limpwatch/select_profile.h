// The profiles `limpwatch select` decides from: per-function calls and times
// in windows of time, read from `limpwatch dump --json` files (one window per
// file) or observed on a live segment (one window per --window seconds).
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SELECT_PROFILE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SELECT_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::cli {

struct WindowedFunction {
  std::string name;
  uint64_t calls = 0;
  double self_ns = 0;
  double total_ns = 0;
};

struct ProfileWindow {
  std::string source;  // file name, or segment name and window number
  std::vector<WindowedFunction> functions;
};

// Reads the "functions" array of a `limpwatch dump --json` file. False with
// a one-line *error when the file cannot be read or is not such a dump.
bool LoadDumpJson(const std::string& path, ProfileWindow* out, std::string* error);

// Watches the segment `name` for `seconds`, one window per `window_seconds`
// (the counters' differences). False with *error when it cannot be read.
bool ObserveLive(const std::string& name, double seconds, double window_seconds, std::vector<ProfileWindow>* out,
                 std::string* error);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SELECT_PROFILE_H_
