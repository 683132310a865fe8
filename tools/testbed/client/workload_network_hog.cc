// The network hogs: a third process loading one server's network path with
// real requests (field notes: a raw TCP flood is rejected by the server as a
// bad magic and barely slows it, so the hog must speak the protocol).
//
//   hog-write: each stream sends 4 MiB WRITEs to a scratch object on the
//              server at an unaligned offset, over and over. The server's
//              poll loop, flow and storage layers handle every byte; being
//              unaligned, the writes land in the page cache (buffered path)
//              on the same 4 MiB again and again, so the disk sees almost
//              none of it: the load is on the network path.
//   hog-read:  each stream READs 4 MiB chunks of a sparse scratch object
//              (truncated to 256 MiB, never written). The server runs its
//              whole read path and sends every byte, but a hole reads as
//              zeros without disk I/O.
//
// Streams run until the process is told to stop (SIGTERM / SIGINT) or
// --seconds pass; the scratch object is removed at the end. Progress lines
// as for the workloads.
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <vector>

#include "client/progress_reporter.h"
#include "client/workloads.h"
#include "common/socket_util.h"

namespace limpwatch::testbed::client {
namespace {

constexpr uint64_t kHogChunk = 4 * 1024 * 1024;
constexpr uint64_t kSparseSize = 256 * 1024 * 1024;

enum class HogKind { kWrite, kRead };

void RunHogStream(const WorkloadContext& context, const ServerAlias& alias, uint64_t handle, HogKind kind,
                  uint64_t stream, uint64_t deadline_ns, ProgressReporter* reporter) {
  ServerConnection connection(alias, context.timeout_ms, context.interrupted);
  std::vector<uint8_t> buffer(kHogChunk, 0);
  IoPiece piece{buffer.data(), buffer.size()};
  uint64_t position = stream * kHogChunk;
  while (!context.interrupted->load() && (deadline_ns == 0 || MonotonicNs() < deadline_ns)) {
    uint64_t moved = 0;
    int error;
    if (kind == HogKind::kWrite) {
      error = connection.Write(handle, 1 + stream * 2 * kHogChunk, {&piece, 1}, &moved);
    } else {
      error = connection.Read(handle, position, {&piece, 1}, &moved);
      position = (position + kHogChunk) % kSparseSize;
    }
    if (error == EINTR) break;
    if (error != 0) {
      reporter->AddError(kind == HogKind::kWrite ? "write" : "read", error);
      usleep(100000);  // a dead or hung server: do not spin
      continue;
    }
    reporter->AddBytes(kHogChunk);
    reporter->AddOps(1);
  }
}

int RunNetworkHog(const WorkloadContext& context, const WorkloadSettings& settings, HogKind kind) {
  TestbedFileSystem& fs = *context.fs;
  const char* workload = kind == HogKind::kWrite ? "write-network-hog" : "read-network-hog";
  if (settings.server < 0 || static_cast<size_t>(settings.server) >= fs.server_count()) {
    EmitJsonLine(JsonLine().Add("event", "usage").Add("error", std::string(workload) + " needs --server INDEX"));
    return 2;
  }
  auto server = static_cast<uint32_t>(settings.server);
  ProgressReporter reporter(workload);
  reporter.Start(JsonLine().Add("server", server).Add("streams", settings.streams));
  std::string name = fs.NameOnServer("hog-" + std::to_string(getpid()), server);
  OpenFile file;
  int error = fs.CreateOnOneServer(name, static_cast<uint32_t>(kHogChunk), &file);
  if (error == 0 && kind == HogKind::kRead) error = fs.Truncate(file, kSparseSize);
  if (error != 0) {
    reporter.AddError("create", error);
    if (file.metafile != 0) fs.Remove(name);
    return reporter.Finish(false, {});
  }
  reporter.SetPhase("flood");
  uint64_t deadline = settings.seconds > 0 ? MonotonicNs() + static_cast<uint64_t>(settings.seconds * 1e9) : 0;
  std::vector<std::thread> streams;
  for (uint64_t stream = 0; stream < settings.streams; ++stream) {
    streams.emplace_back(RunHogStream, std::cref(context), std::cref(fs.config().servers[server]),
                         file.layout.datafiles[0].handle, kind, stream, deadline, &reporter);
  }
  for (auto& stream : streams) stream.join();
  // The scratch object goes even after a stop signal.
  fs.StopWatchingInterruption();
  if ((error = fs.Remove(name)) != 0) reporter.AddError("remove", error);
  return reporter.Finish(false, {});
}

}  // namespace

int RunWriteNetworkHog(const WorkloadContext& context, const WorkloadSettings& settings) {
  return RunNetworkHog(context, settings, HogKind::kWrite);
}

int RunReadNetworkHog(const WorkloadContext& context, const WorkloadSettings& settings) {
  return RunNetworkHog(context, settings, HogKind::kRead);
}

}  // namespace limpwatch::testbed::client
