#include "serve/metrics_page.h"

#include <time.h>

namespace limpwatch::cli::serve {

const std::string& MetricsPage::Render() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t now_ms = int64_t(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
  if (rendered_at_ms_ < 0 || now_ms - rendered_at_ms_ >= reuse_ms_) {
    page_ = RenderMetrics(collector_.Collect(), settings_);
    rendered_at_ms_ = now_ms;
  }
  return page_;
}

}  // namespace limpwatch::cli::serve
