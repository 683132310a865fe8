#include "support/started_program.h"

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/traced_run.h"

namespace limpwatch::testing {

LogFile::LogFile() : path_(UniqueSegmentName("/tmp/lw-test-log-")) {}

LogFile::~LogFile() { std::remove(path_.c_str()); }

std::string LogFile::Text() const {
  std::ifstream file(path_);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool LogFile::WaitFor(const std::string& text, int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Text().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

ChildGuard::~ChildGuard() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

int ChildGuard::Wait() {
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

}  // namespace limpwatch::testing
