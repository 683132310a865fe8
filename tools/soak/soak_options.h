// The soak driver's command line.
#ifndef LIMPWATCH_TOOLS_SOAK_SOAK_OPTIONS_H_
#define LIMPWATCH_TOOLS_SOAK_SOAK_OPTIONS_H_

#include <cstdint>
#include <string>

namespace limpwatch::soak {

struct SoakOptions {
  uint64_t seconds = 1800;       // how long the load and the faults run
  uint64_t warm_up_seconds = 0;  // left out of the RSS and fd slopes; 0: a fifth of the run, at most 5 min
  uint64_t seed = 0;             // 0: drawn at start (and printed)
  uint32_t peers = 3;            // peer servers around the host server
  uint32_t clients = 4;          // load connections (one of them over the Unix socket)
  uint64_t short_threads = 0;    // short threads to churn; 0: 10,000 per 30 minutes of run, at least 500
  std::string work_dir;          // empty: a fresh directory under /tmp
  std::string server_path;       // limpwatch-soak-server
  std::string cli_path;          // limpwatch, for the readers that die mid-read
  bool keep = false;             // keep the work directory (and the host server's segment)
  bool verbose = false;          // every fault action on stdout as it happens
};

// Parses argv into *options (whose program paths hold the defaults). True
// when the soak should run; otherwise *exit_status says how to exit: 0
// after --help, 2 after a usage error (its one line printed).
bool ParseSoakOptions(int argc, char** argv, SoakOptions* options, int* exit_status);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SOAK_OPTIONS_H_
