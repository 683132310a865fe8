// A progress bar with an estimate of the time left, on stderr when it is a
// terminal (and one final line otherwise), for long offline commands.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_PROGRESS_BAR_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_PROGRESS_BAR_H_

#include <chrono>
#include <cstddef>
#include <string>

namespace limpwatch::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  void Update(size_t done, size_t total);
  void Finish();

 private:
  std::string label_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  size_t total_ = 0;
};

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_PROGRESS_BAR_H_
