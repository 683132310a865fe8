#include "launcher/process_control.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "limpwatch/shm/segment.h"

extern char** environ;

namespace limpwatch::testbed::launcher {
namespace {

std::string ProcStatLine(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(file, line);
  return line;
}

bool NameMatches(const std::string& entry, const std::string& pattern) {
  std::string name = entry.substr(0, entry.find('='));
  if (!pattern.empty() && pattern.back() == '*') return name.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0;
  return name == pattern;
}

}  // namespace

pid_t SpawnProcess(const SpawnOptions& options, std::string* error) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    bool drop = false;
    for (const auto& name : options.unset_environment) drop = drop || NameMatches(text, name);
    for (const auto& set : options.set_environment) drop = drop || NameMatches(text, set.substr(0, set.find('=')));
    if (!drop) environment.push_back(text);
  }
  environment.insert(environment.end(), options.set_environment.begin(), options.set_environment.end());
  std::vector<std::string> arguments{options.program};
  arguments.insert(arguments.end(), options.arguments.begin(), options.arguments.end());
  std::vector<char*> argv, envp;
  for (auto& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  int out = -1, err = -1;
  if (options.stdout_pipe < 0) {
    out = open(options.stdout_path.empty() ? "/dev/null" : options.stdout_path.c_str(),
               O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out < 0) {
      *error = "open " + options.stdout_path + ": " + strerror(errno);
      return -1;
    }
  }
  if (!options.stderr_path.empty()) {
    err = open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err < 0) {
      *error = "open " + options.stderr_path + ": " + strerror(errno);
      if (out >= 0) close(out);
      return -1;
    }
  }
  // Opened here: the child may only make async-signal-safe calls.
  int cgroup_procs = -1;
  if (!options.join_cgroup.empty()) {
    cgroup_procs = open((options.join_cgroup + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (cgroup_procs < 0) {
      *error = "open " + options.join_cgroup + "/cgroup.procs: " + strerror(errno);
      if (out >= 0) close(out);
      if (err >= 0) close(err);
      return -1;
    }
  }
  int stdout_fd = options.stdout_pipe >= 0 ? options.stdout_pipe : out;
  int stderr_fd = err >= 0 ? err : stdout_fd;
  pid_t pid = fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    if (options.new_session) setsid();
    // Before exec, so that every page the program touches is charged there.
    if (cgroup_procs >= 0 && write(cgroup_procs, "0", 1) != 1) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(stdout_fd, STDOUT_FILENO);
    dup2(stderr_fd, STDERR_FILENO);
    int first_closed = 3;
    if (options.pass_fd >= 0) {
      // dup2 onto itself would keep close-on-exec set.
      if (options.pass_fd == 3 ? fcntl(3, F_SETFD, 0) != 0 : dup2(options.pass_fd, 3) != 3) _exit(126);
      first_closed = 4;
    }
    // Nothing else is inherited: a pipe our caller left open (a test reading
    // the launcher's output) must not be held open by a long-lived server.
    close_range(static_cast<unsigned>(first_closed), ~0u, 0);
    execve(options.program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  int fork_errno = errno;
  if (cgroup_procs >= 0) close(cgroup_procs);
  if (out >= 0) close(out);
  if (err >= 0) close(err);
  if (pid < 0) {
    *error = std::string("fork: ") + strerror(fork_errno);
    return -1;
  }
  return pid;
}

uint64_t ProcessStartTime(pid_t pid) { return shm::ProcessStartTime(pid); }

char ProcessState(pid_t pid) { return shm::ProcStatState(ProcStatLine(pid)).value_or(0); }

uint64_t ProcessCpuNs(pid_t pid) {
  std::string line = ProcStatLine(pid);
  uint64_t ticks = shm::ProcStatField(line, 14).value_or(0) + shm::ProcStatField(line, 15).value_or(0);
  return ticks * (1000000000ull / uint64_t(sysconf(_SC_CLK_TCK)));
}

uint64_t ProcessMajorFaults(pid_t pid) { return shm::ProcStatField(ProcStatLine(pid), 12).value_or(0); }

bool IsSameProcessAlive(pid_t pid, uint64_t start_time) { return start_time != 0 && shm::OwnerAlive(pid, start_time); }

void ReapIfChild(pid_t pid) {
  if (pid > 0) waitpid(pid, nullptr, WNOHANG);
}

bool SignalProcess(pid_t pid, uint64_t start_time, int signal_number) {
  if (pid <= 0 || ProcessStartTime(pid) != start_time) return false;
  return kill(pid, signal_number) == 0;
}

bool WaitForExit(pid_t pid, uint64_t start_time, int timeout_ms) {
  for (int waited = 0;; waited += 20) {
    ReapIfChild(pid);
    if (!IsSameProcessAlive(pid, start_time)) return true;
    if (waited >= timeout_ms) return false;
    SleepMs(20);
  }
}

bool ReapChild(pid_t pid, int timeout_ms, int* wait_status) {
  for (int waited = 0;; waited += 20) {
    pid_t reaped = waitpid(pid, wait_status, WNOHANG);
    if (reaped == pid) return true;
    if (reaped < 0 || waited >= timeout_ms) return false;
    SleepMs(20);
  }
}

bool StopProcess(pid_t pid, uint64_t start_time, int grace_ms) {
  if (!IsSameProcessAlive(pid, start_time)) {
    ReapIfChild(pid);
    return true;
  }
  // A stopped process (hang fault) must be continued to act on SIGTERM.
  SignalProcess(pid, start_time, SIGTERM);
  SignalProcess(pid, start_time, SIGCONT);
  if (WaitForExit(pid, start_time, grace_ms)) return true;
  SignalProcess(pid, start_time, SIGKILL);
  return WaitForExit(pid, start_time, 2000);
}

std::vector<pid_t> ThreadsOf(pid_t pid) {
  std::vector<pid_t> threads;
  std::string path = "/proc/" + std::to_string(pid) + "/task";
  DIR* directory = opendir(path.c_str());
  if (directory == nullptr) return threads;
  while (dirent* entry = readdir(directory)) {
    if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') threads.push_back(std::atoi(entry->d_name));
  }
  closedir(directory);
  return threads;
}

std::string ExecutableDirectory() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return ".";
  path[length] = '\0';
  std::string full(path);
  return full.substr(0, full.rfind('/'));
}

void SleepMs(int milliseconds) {
  timespec delay{milliseconds / 1000, (milliseconds % 1000) * 1000000L};
  while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
  }
}

}  // namespace limpwatch::testbed::launcher
