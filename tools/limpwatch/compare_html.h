// `limpwatch compare --html FILE`: the comparison as a page, with the
// distributions of the top mutations before and after (each baseline run
// its own line), drawn as inline SVG like the report's charts: no script,
// nothing fetched, readable offline.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_COMPARE_HTML_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_COMPARE_HTML_H_

#include <string>

#include "compare_output.h"

namespace limpwatch::cli {

std::string RenderComparisonHtml(const ComparisonReport& report);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_COMPARE_HTML_H_
