// Text made safe for the report page. Every string that reaches the page
// from a recording or the command line (a server's name, a function's, a
// file's path, an alarm's reason) goes through EscapeHtml, in elements and
// in attribute values alike: a recording is written by whatever process
// chose the server's name.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_REPORT_HTML_TEXT_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_REPORT_HTML_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace limpwatch::report {

// & < > " ' as entities; control characters other than line breaks and tabs,
// and bytes that are not UTF-8, as '?', so the page stays well-formed XML
// as well as HTML.
std::string EscapeHtml(std::string_view text);

// A compact number for labels: "0", "0.25", "19.8", "17500", "1.2e+06".
std::string ShortNumber(double value);

// UTC, the same wherever the page is read: "2024-11-22 00:44:01" and, for
// axis labels, "00:44:01".
std::string UtcDateTime(uint64_t unix_ms);
std::string UtcTimeOfDay(uint64_t unix_ms);

}  // namespace limpwatch::report

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_REPORT_HTML_TEXT_H_
