#include "output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "format.h"

namespace limpwatch::cli {
namespace {

// errno of the first failed write, kept because later stdio calls may clobber it.
int write_errno = 0;

}  // namespace

int Fail(int exit_code, std::string_view message) {
  // Messages may carry text from an untrusted segment or from argv; Printable
  // keeps them on one line and free of terminal escapes.
  std::string line = "limpwatch: " + Printable(message) + "\n";
  std::fflush(stdout);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  return exit_code;
}

void Warn(std::string_view message) {
  std::string line = "limpwatch: warning: " + Printable(message) + "\n";
  std::fputs(line.c_str(), stderr);
}

bool WriteOut(std::string_view text) {
  if (write_errno != 0) return false;
  if (text.empty()) return true;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
    write_errno = errno != 0 ? errno : EIO;
    return false;
  }
  return true;
}

bool FlushOut() {
  if (write_errno != 0) return false;
  if (std::fflush(stdout) != 0) {
    write_errno = errno != 0 ? errno : EIO;
    return false;
  }
  return true;
}

int FinishOutput(int exit_code) {
  if (FlushOut()) return exit_code;
  if (write_errno == EPIPE) return exit_code;
  return Fail(kExitFailure, std::string("cannot write to stdout: ") + std::strerror(write_errno));
}

}  // namespace limpwatch::cli
