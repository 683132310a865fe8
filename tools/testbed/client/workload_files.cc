// Plain file commands: copy a local file in (put) and out (get), show where a
// file lives (stat), remove it (rm), and ping every server. The tests use
// them to check that data round-trips and lands where the layout says.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "client/workloads.h"
#include "common/json_line.h"
#include "common/socket_util.h"

namespace limpwatch::testbed::client {
namespace {

constexpr uint64_t kCopyChunk = 64 * 1024 * 1024;

int Report(const char* command, const std::string& name, int error, JsonLine details = {}) {
  JsonLine line;
  line.Add("event", command).Add("name", name).Add("status", error == 0 ? "ok" : "error");
  if (error != 0) line.Add("errno", error).Add("error", strerror(error));
  if (!details.empty()) line.AddRaw("details", details.str());
  EmitJsonLine(line);
  return error == 0 ? 0 : 1;
}

bool NeedArguments(const WorkloadSettings& settings, size_t count, const char* usage) {
  if (settings.arguments.size() == count) return true;
  EmitJsonLine(JsonLine().Add("event", "usage").Add("error", usage));
  return false;
}

std::string HandleText(uint64_t handle) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, handle);
  return text;
}

}  // namespace

// put LOCAL NAME: striped over all servers; with --server I its one datafile
// on server I (the metadata stays on the name's metadata server); with
// --one-server all of it on its metadata server (as postmark's files).
int RunPut(const WorkloadContext& context, const WorkloadSettings& settings) {
  if (!NeedArguments(settings, 2, "put LOCAL NAME [--server I | --one-server] [--stripe-kib K]")) return 2;
  const std::string& local = settings.arguments[0];
  const std::string& name = settings.arguments[1];
  int fd = open(local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Report("put", name, errno);
  uint32_t stripe = settings.stripe_size != 0 ? settings.stripe_size : context.fs->config().stripe_size;
  OpenFile file;
  std::vector<uint32_t> servers;  // all, unless --server puts the one datafile there
  if (settings.server >= 0) servers.push_back(static_cast<uint32_t>(settings.server));
  int error = settings.one_server ? context.fs->CreateOnOneServer(name, stripe, &file)
                                  : context.fs->Create(name, stripe, servers, &file);
  std::vector<uint8_t> buffer(kCopyChunk);
  uint64_t offset = 0;
  while (error == 0) {
    ssize_t count = read(fd, buffer.data(), buffer.size());
    if (count < 0) error = errno;
    if (count <= 0) break;
    error = context.fs->Write(file, offset, buffer.data(), static_cast<uint64_t>(count));
    offset += static_cast<uint64_t>(count);
  }
  close(fd);
  return Report("put", name, error, JsonLine().Add("bytes", offset));
}

// get NAME LOCAL
int RunGet(const WorkloadContext& context, const WorkloadSettings& settings) {
  if (!NeedArguments(settings, 2, "get NAME LOCAL")) return 2;
  const std::string& name = settings.arguments[0];
  const std::string& local = settings.arguments[1];
  OpenFile file;
  uint64_t size = 0;
  int error = context.fs->Open(name, &file);
  if (error == 0) error = context.fs->Size(file, &size);
  if (error != 0) return Report("get", name, error);
  int fd = open(local.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Report("get", name, errno);
  std::vector<uint8_t> buffer(kCopyChunk);
  for (uint64_t offset = 0; offset < size && error == 0;) {
    uint64_t length = std::min<uint64_t>(kCopyChunk, size - offset);
    error = context.fs->Read(file, offset, buffer.data(), length);
    if (error == 0 && write(fd, buffer.data(), length) != static_cast<ssize_t>(length)) error = errno ? errno : EIO;
    offset += length;
  }
  if (close(fd) != 0 && error == 0) error = errno;
  return Report("get", name, error, JsonLine().Add("bytes", size));
}

// stat NAME: size, metadata server and the datafiles with their servers.
int RunStat(const WorkloadContext& context, const WorkloadSettings& settings) {
  if (!NeedArguments(settings, 1, "stat NAME")) return 2;
  const std::string& name = settings.arguments[0];
  OpenFile file;
  uint64_t size = 0;
  int error = context.fs->Open(name, &file);
  if (error == 0) error = context.fs->Size(file, &size);
  if (error != 0) return Report("stat", name, error);
  std::string datafiles = "[";
  for (size_t i = 0; i < file.layout.datafiles.size(); ++i) {
    const DatafileRef& datafile = file.layout.datafiles[i];
    datafiles += (i ? "," : "") + JsonLine()
                                      .Add("handle", HandleText(datafile.handle))
                                      .Add("server", datafile.server)
                                      .Add("alias", context.fs->config().servers[datafile.server].name)
                                      .str();
  }
  datafiles += "]";
  return Report("stat", name, 0,
                JsonLine()
                    .Add("size", size)
                    .Add("metafile", HandleText(file.metafile))
                    .Add("metadata_server", file.metadata_server)
                    .Add("stripe_size", uint64_t{file.layout.stripe_size})
                    .AddRaw("datafiles", datafiles));
}

int RunRemove(const WorkloadContext& context, const WorkloadSettings& settings) {
  if (!NeedArguments(settings, 1, "rm NAME")) return 2;
  return Report("rm", settings.arguments[0], context.fs->Remove(settings.arguments[0]));
}

// ping [--server I]: one line per server.
int RunPing(const WorkloadContext& context, const WorkloadSettings& settings) {
  int failures = 0;
  for (uint32_t server = 0; server < context.fs->server_count(); ++server) {
    if (settings.server >= 0 && server != static_cast<uint32_t>(settings.server)) continue;
    uint64_t start = MonotonicNs();
    uint32_t index = 0;
    int error = context.fs->Ping(server, &index);
    JsonLine line;
    line.Add("event", "ping").Add("server", server).Add("alias", context.fs->config().servers[server].name);
    line.Add("status", error == 0 ? "ok" : "error");
    if (error == 0) {
      line.Add("rtt_us", double(MonotonicNs() - start) / 1e3).Add("index", index);
    } else {
      line.Add("errno", error).Add("error", strerror(error));
      ++failures;
    }
    EmitJsonLine(line);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace limpwatch::testbed::client
