// The files of a directory whose names end in a suffix (recordings,
// alarm logs of an experiment).
#ifndef LIMPWATCH_TOOLS_EVAL_LIST_FILES_H_
#define LIMPWATCH_TOOLS_EVAL_LIST_FILES_H_

#include <string>
#include <vector>

namespace limpwatch::eval {

// Paths "directory/name", in the directory's order; none when it cannot be read.
std::vector<std::string> ListFiles(const std::string& directory, const std::string& suffix);

}  // namespace limpwatch::eval

#endif  // LIMPWATCH_TOOLS_EVAL_LIST_FILES_H_
