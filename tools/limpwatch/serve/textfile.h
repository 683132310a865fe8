// The node_exporter textfile form: the exposition written to
// DIR/limpwatch.prom by a rename, so the collector never reads half a file.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_SERVE_TEXTFILE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_SERVE_TEXTFILE_H_

#include <string>

namespace limpwatch::cli::serve {

inline constexpr const char* kTextfileName = "limpwatch.prom";

// Writes `content` to a temporary file in `directory` (a dot file, which the
// textfile collector does not read), flushes it to disk and renames it over
// DIR/limpwatch.prom. False with a one-line *error; the previous file stays.
bool WriteTextfile(const std::string& directory, const std::string& content, std::string* error);

}  // namespace limpwatch::cli::serve

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_SERVE_TEXTFILE_H_
