// Readers of the host server's segment that die in the middle of a read:
// `limpwatch top` and `limpwatch dump --json` killed (SIGKILL) after a
// random moment, and a process of the driver's own that takes snapshots
// in a loop until it is killed. A reader only maps the segment read-only,
// so none of this may change anything the server does.
#ifndef LIMPWATCH_TOOLS_SOAK_DYING_READERS_H_
#define LIMPWATCH_TOOLS_SOAK_DYING_READERS_H_

#include <cstdint>
#include <random>
#include <string>

namespace limpwatch::soak {

struct ReaderTally {
  uint64_t started = 0;
  uint64_t killed_while_reading = 0;  // still running when killed
  uint64_t finished_first = 0;        // done before the kill came
  uint64_t failed_to_start = 0;
};

enum class ReaderKind { kTop, kDumpJson, kSnapshotLoop };

// Runs one reader of segment `name` (`object` for the snapshot loop) and
// kills it after up to `max_life_ms`. Blocks for the reader's life.
void RunDyingReader(ReaderKind kind, const std::string& cli_path, const std::string& self_path,
                    const std::string& name, const std::string& object, uint64_t max_life_ms,
                    std::mt19937_64& random, ReaderTally* tally);

// The hidden `--snapshot-loop OBJECT` mode of the driver: snapshots until killed.
int SnapshotLoop(const std::string& object);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_DYING_READERS_H_
