#include "server_process.h"
#include "soak_clock.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace limpwatch::soak {

ServerProcess::~ServerProcess() {
  Kill();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

bool ServerProcess::Start(std::string* error) {
  if (Running()) return true;
  if (stdout_fd_ >= 0) {
    close(stdout_fd_);
    stdout_fd_ = -1;
  }
  int log = open(launch_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) {
    *error = "cannot open " + launch_.log_path + ": " + std::strerror(errno);
    return false;
  }
  int out[2] = {-1, -1};
  if (launch_.capture_stdout && pipe2(out, O_CLOEXEC) != 0) {
    *error = std::string("pipe2: ") + std::strerror(errno);
    close(log);
    return false;
  }
  // Everything the child needs is built before the fork: the driver has threads.
  std::vector<std::string> words;
  words.push_back(launch_.program);
  words.insert(words.end(), launch_.arguments.begin(), launch_.arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  variables.insert(variables.end(), launch_.environment.begin(), launch_.environment.end());
  std::vector<char*> envp;
  for (std::string& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);

  pid_t child = fork();
  if (child < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    close(log);
    if (out[0] >= 0) close(out[0]), close(out[1]);
    return false;
  }
  if (child == 0) {
    int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    dup2(launch_.capture_stdout ? out[1] : log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    setpgid(0, 0);  // a signal to the driver's group does not reach it
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(log);
  if (launch_.capture_stdout) {
    close(out[1]);
    stdout_fd_ = out[0];
  }
  pid_ = child;
  status_ = 0;
  ++starts_;
  return true;
}

void ServerProcess::Signal(int signal_number) {
  if (pid_ > 0) kill(pid_, signal_number);
}

void ServerProcess::Reap(bool wait) {
  if (pid_ <= 0) return;
  int status = 0;
  pid_t done;
  do {
    done = waitpid(pid_, &status, wait ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == pid_ || (done < 0 && errno == ECHILD)) {
    status_ = status;
    pid_ = -1;
  }
}

bool ServerProcess::Running() {
  Reap(false);
  return pid_ > 0;
}

void ServerProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  Reap(true);
}

bool ServerProcess::Stop(uint64_t timeout_ms, std::string* captured, std::string* error) {
  if (!Running()) {
    *error = "it was not running";
    return false;
  }
  kill(pid_, SIGTERM);
  uint64_t deadline = NowMs() + timeout_ms;
  if (stdout_fd_ >= 0) {
    char buffer[4096];
    for (;;) {
      uint64_t now = NowMs();
      if (now >= deadline) break;
      pollfd watched{stdout_fd_, POLLIN, 0};
      if (poll(&watched, 1, int(deadline - now)) <= 0) continue;
      ssize_t got = read(stdout_fd_, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      captured->append(buffer, size_t(got));
    }
  }
  while (Running() && NowMs() < deadline) {
    timespec pause{0, 20'000'000};
    nanosleep(&pause, nullptr);
  }
  if (pid_ > 0) {
    Kill();
    *error = "it did not exit within " + std::to_string(timeout_ms) + " ms of SIGTERM (killed)";
    return false;
  }
  if (!WIFEXITED(status_) || WEXITSTATUS(status_) != 0) {
    *error = WIFSIGNALED(status_) ? "it died of signal " + std::to_string(WTERMSIG(status_))
                                  : "it exited " + std::to_string(WEXITSTATUS(status_));
    return false;
  }
  return true;
}

}  // namespace limpwatch::soak
