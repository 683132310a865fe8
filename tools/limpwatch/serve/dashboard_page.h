// The live page of `limpwatch serve` (/dashboard) and its click-through
// (/server?name=NAME): self-contained HTML (inline style, charts drawn here
// as SVG, no script, no request to anywhere else), refreshing itself.
//
// Every name that reaches the page (a server's, a function's) is escaped
// (report::EscapeHtml): a segment's name is chosen by whatever process made it.
//
// The dashboard: the open alarms (indicted server, resource, kind, how many
// of this node's analyzers report it, the metrics and the top functions),
// then one row per server with, per compared metric, its score as a share of
// its threshold over the last minutes. A server an open alarm indicts is
// marked limping: its row carries class "limping" and data-resource, which
// a browser test (or a script) can read from the DOM.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_DASHBOARD_PAGE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_DASHBOARD_PAGE_H_

#include <string>

#include "serve/metrics_exposition.h"
#include "serve/score_history.h"
#include "serve/segment_collector.h"

namespace limpwatch::cli::serve {

inline constexpr int kDashboardRefreshSeconds = 5;

std::string RenderDashboard(const Collection& collection, const ScoreHistory& history,
                            const ExpositionSettings& settings);

// One served server: its scores now, its service times, its top functions
// by self time. Empty when no served segment has that server label.
std::string RenderServerPage(const Collection& collection, const std::string& server);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_DASHBOARD_PAGE_H_
