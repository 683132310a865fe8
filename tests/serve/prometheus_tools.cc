#include "serve/prometheus_tools.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace limpwatch::testing {

std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream directories(std::string(path ? path : "") + ":/usr/bin:/usr/sbin");
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    if (directory.empty()) continue;
    std::string candidate = directory + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string MissingPrometheusTool(const std::string& program) {
  return program + " is not installed, so this test cannot run: install Debian's 'prometheus' package "
                   "(tools/setup.sh does), which has both prometheus and promtool";
}

}  // namespace limpwatch::testing
