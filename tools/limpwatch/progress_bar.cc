#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace limpwatch::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), terminal_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::Update(size_t done, size_t total) {
  total_ = total;
  if (!terminal_ || total == 0) return;
  auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  double fraction = double(done) / double(total);
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double left = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  constexpr int kWidth = 30;
  int filled = int(fraction * kWidth);
  std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%%  %zu/%zu  %.0fs left ", label_.c_str(), filled,
               "##############################", kWidth - filled, "", fraction * 100, done, total, left);
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "%s%s: %zu done in %.1fs\n", terminal_ ? "\r\033[K" : "", label_.c_str(), total_, elapsed);
}

}  // namespace limpwatch::cli
