// A traced server the soak starts, kills, restarts and stops: the host
// server and its peers are all limpwatch-soak-server processes.
#ifndef LIMPWATCH_TOOLS_SOAK_SERVER_PROCESS_H_
#define LIMPWATCH_TOOLS_SOAK_SERVER_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace limpwatch::soak {

struct ServerLaunch {
  std::string program;
  std::vector<std::string> arguments;    // after the program's name
  std::vector<std::string> environment;  // NAME=VALUE, added to the driver's own
  std::string log_path;                  // stderr (appended), stdin is /dev/null
  bool capture_stdout = false;           // else stdout goes to the log too
};

class ServerProcess {
 public:
  explicit ServerProcess(ServerLaunch launch) : launch_(std::move(launch)) {}
  ~ServerProcess();  // kills it if it still runs
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  bool Start(std::string* error);
  void Signal(int signal_number);
  // True while it runs; reaps it once it has exited (its status kept).
  bool Running();
  // Kills it (SIGKILL) and reaps it.
  void Kill();
  // SIGTERM, then everything it writes to stdout until it closes it, then
  // its exit status; SIGKILL after `timeout_ms`. False with *error if it
  // did not exit 0 in time.
  bool Stop(uint64_t timeout_ms, std::string* captured, std::string* error);

  pid_t pid() const { return pid_; }
  int restarts() const { return starts_ > 0 ? starts_ - 1 : 0; }
  const std::string& log_path() const { return launch_.log_path; }

 private:
  void Reap(bool wait);

  ServerLaunch launch_;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int status_ = 0;
  int starts_ = 0;
};

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SERVER_PROCESS_H_
