// The paths `limpwatch serve` answers. This is where more pages join the
// endpoint (the dashboard adds its routes here): each is a path and a
// handler that must answer at once, without blocking.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SERVE_ROUTES_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SERVE_ROUTES_H_

#include <vector>

#include "serve/http_server.h"
#include "serve/metrics_page.h"

namespace limpwatch::cli::serve {

// "/metrics" (the exposition), "/dashboard" and "/server?name=SERVER" (the
// live pages, dashboard_page.h) and "/" (a short page listing the paths).
// `metrics` must outlive the routes.
std::vector<Route> BuildRoutes(MetricsPage* metrics);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_SERVE_ROUTES_H_
