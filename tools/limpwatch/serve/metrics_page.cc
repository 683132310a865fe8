#include "serve/metrics_page.h"

#include <time.h>

#include "serve/dashboard_page.h"

namespace limpwatch::cli::serve {

void MetricsPage::Refresh() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  int64_t now_ms = int64_t(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
  if (collected_at_ms_ >= 0 && now_ms - collected_at_ms_ < reuse_ms_) return;
  collection_ = collector_.Collect();
  collected_at_ms_ = now_ms;
  history_.Record(collection_);
  page_current_ = false;
}

const std::string& MetricsPage::Render() {
  Refresh();
  if (!page_current_) {
    page_ = RenderMetrics(collection_, settings_);
    page_current_ = true;
  }
  return page_;
}

std::string MetricsPage::Dashboard() {
  Refresh();
  return RenderDashboard(collection_, history_, settings_);
}

std::string MetricsPage::ServerPage(const std::string& server) {
  Refresh();
  return RenderServerPage(collection_, server);
}

}  // namespace limpwatch::cli::serve
