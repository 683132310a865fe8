// One sequential pass over a striped file in records (dd's and IOzone's
// access pattern), shared by ddw / ddr / iozonew / iozoner.
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_SEQUENTIAL_PASS_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_SEQUENTIAL_PASS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "client/file_system.h"
#include "client/progress_reporter.h"
#include "client/workloads.h"

namespace limpwatch::testbed::client {

// kWriteNew writes the file anew: each pass first truncates it to empty, as
// dd does (O_TRUNC) and IOzone's write test does (a new file), so every pass
// allocates its blocks again. kWrite overwrites what is there.
enum class PassKind { kWriteNew, kWrite, kRead };

// Moves the file's first `size` bytes record by record, counting bytes and
// records in `reporter` (errors are counted, printed and skipped: a limping
// server shows as a slowdown and errors, not an abort). Stops early when
// interrupted or, if deadline_ns != 0, at that time. Returns false when it
// stopped early.
bool RunSequentialPass(const WorkloadContext& context, const OpenFile& file, PassKind kind, uint64_t size,
                       uint64_t record, std::vector<uint8_t>* buffer, ProgressReporter* reporter, uint64_t deadline_ns);

// Repeats passes until `seconds` have gone by (one pass when seconds == 0).
// Returns false when interrupted.
bool RunTimedPasses(const WorkloadContext& context, const OpenFile& file, PassKind kind, uint64_t size, uint64_t record,
                    double seconds, ProgressReporter* reporter);

// The file a sequential workload works on.
struct SequentialFile {
  std::string name;
  OpenFile file;
  uint64_t size = 0;     // the bytes each pass moves
  bool created = false;  // by this run: removed at the end unless --keep
};

// Opens the workload's file for writing, creating it when it is missing.
// False when it could not (the error is in `reporter`).
bool OpenForWriting(const WorkloadContext& context, const WorkloadSettings& settings, uint32_t stripe,
                    ProgressReporter* reporter, SequentialFile* out);

// Opens the workload's file for reading at its size; a missing file is
// created and filled by `prepare` first, outside the measured phase. False
// when it could not (the error is in `reporter`) or `prepare` was interrupted
// (*interrupted is then true).
bool OpenForReading(const WorkloadContext& context, const WorkloadSettings& settings, uint32_t stripe,
                    const std::function<bool(const SequentialFile&)>& prepare, ProgressReporter* reporter,
                    SequentialFile* out, bool* interrupted);

// Ends a sequential workload: stops watching Ctrl-C, removes the file when
// `remove` (and not --keep), and reports. Returns the process's exit status.
int FinishSequential(const WorkloadContext& context, const WorkloadSettings& settings, const SequentialFile& file,
                     bool remove, bool completed, ProgressReporter* reporter);

// Default sizes for the sequential workloads on this machine.
uint64_t DefaultRecord(const WorkloadContext& context, uint32_t stripe_size);
uint32_t StripeSizeOf(const WorkloadContext& context, const WorkloadSettings& settings);
std::string FileNameOf(const WorkloadSettings& settings, const std::string& workload);

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_SEQUENTIAL_PASS_H_
