// The report page: one self-contained HTML file (no script, font, image or
// address outside it), readable without a server or a network. Per cluster:
// what was replayed and how, a table of its servers, a table of its alarms
// (time, server, resource, metrics, top functions, why), then per server one
// small chart per compared metric: its score and threshold over time, the
// windows it was indicted in shaded, its alarms marked.
//
// The page is well-formed XML as well as HTML (every element closed, every
// text escaped), so any XML tool can check or take it apart.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_REPORT_REPORT_HTML_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_REPORT_REPORT_HTML_H_

#include <string>
#include <vector>

#include "report_data.h"

namespace limpwatch::report {

struct ReportPage {
  std::string title;
  std::string preface;                 // preformatted text under the title (the evaluation's table); may be empty
  std::vector<ClusterReport> clusters;  // one for `limpwatch report`, one per experiment for limpwatch-eval
};

std::string RenderReportHtml(const ReportPage& page);

// Writes the page beside `path` and renames it into place, so that a page
// that could not be written whole never replaces an older one. False with a
// one-line *error naming the file.
bool WriteReportFile(const std::string& path, const std::string& html, std::string* error);

// Whether a page can be written there (its folder exists and takes a new
// file): asked before a long replay, not after it.
bool CanWriteReportFile(const std::string& path, std::string* error);

}  // namespace limpwatch::report

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_REPORT_REPORT_HTML_H_
