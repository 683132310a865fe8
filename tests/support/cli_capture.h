// Running the real `limpwatch` binary from a test with its standard output
// and error captured in files, and the small helpers such tests share.
#ifndef LIMPWATCH_TESTS_SUPPORT_CLI_CAPTURE_H_
#define LIMPWATCH_TESTS_SUPPORT_CLI_CAPTURE_H_

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace limpwatch::testing {

struct CliRun {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// " a b c": paths as the arguments of a shell command.
inline std::string Join(const std::vector<std::string>& paths) {
  std::string joined;
  for (const std::string& path : paths) joined += " " + path;
  return joined;
}

// Runs `command` through the shell with its output in `out_path` and
// `err_path` (replaced), and returns its exit status and both outputs.
inline CliRun RunCaptured(const std::string& command, const std::string& out_path, const std::string& err_path) {
  int status = std::system((command + " >" + out_path + " 2>" + err_path).c_str());
  CliRun run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(out_path);
  run.err = ReadFile(err_path);
  return run;
}

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_CLI_CAPTURE_H_
