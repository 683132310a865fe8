// probe: how fast one server is right now, with everything on that server.
// The fault injectors run it before and after injecting to measure the
// slowdown (a runner can run it on every server to see which one limps).
//
//   round trip:  median of 5 PINGs
//   write:       up to --size-mib MiB (default 256) in 1 MiB records, then fsync
//   read:        the same bytes back (the server reads them with O_DIRECT: from the disk)
//   metadata:    up to --small-files creates of a 4 KiB file (default 200), each then removed
// Each of the three phases stops early after --seconds (default 1.5), so the
// probe takes a few seconds on a fast server and on a throttled one alike.
//
// One JSON line: {"event":"probe","server":i,"status":"ok","ping_us":...,
// "write_mib_per_s":...,"read_mib_per_s":...,"meta_ops_per_s":...}, with
// "status":"error" and the errno of the first failure otherwise (ETIMEDOUT
// for a hung server, ECONNREFUSED for a dead one).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "client/workloads.h"
#include "common/json_line.h"
#include "common/socket_util.h"

namespace limpwatch::testbed::client {
namespace {

constexpr uint64_t kProbeRecord = 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024.0;

double SecondsSince(uint64_t start_ns) { return double(MonotonicNs() - start_ns) / 1e9; }

}  // namespace

int RunProbe(const WorkloadContext& context, const WorkloadSettings& settings) {
  TestbedFileSystem& fs = *context.fs;
  if (settings.server < 0 || static_cast<size_t>(settings.server) >= fs.server_count()) {
    EmitJsonLine(JsonLine().Add("event", "usage").Add("error", "probe needs --server INDEX"));
    return 2;
  }
  auto server = static_cast<uint32_t>(settings.server);
  JsonLine line;
  line.Add("event", "probe").Add("server", server).Add("alias", fs.config().servers[server].name);
  int error = 0;
  std::string failed;
  auto fail = [&](const std::string& what, int code) {
    if (error == 0) {
      error = code;
      failed = what;
    }
  };

  std::vector<double> rtts;
  for (int i = 0; i < 5 && error == 0; ++i) {
    uint64_t start = MonotonicNs();
    uint32_t index = 0;
    int status = fs.Ping(server, &index);
    if (status != 0) fail("ping", status);
    rtts.push_back(double(MonotonicNs() - start) / 1e3);
  }
  if (error == 0) {
    std::sort(rtts.begin(), rtts.end());
    line.Add("ping_us", rtts[rtts.size() / 2]);
  }

  std::string name = fs.NameOnServer("probe-" + std::to_string(getpid()), server);
  OpenFile file;
  bool created = false;
  uint64_t size = settings.size_bytes;
  if (error == 0) {
    int status = fs.CreateOnOneServer(name, static_cast<uint32_t>(kProbeRecord), &file);
    if (status != 0) fail("create", status);
    created = status == 0;
  }
  std::vector<uint8_t> buffer(kProbeRecord, 0x5a);
  // Each phase runs until its size is done or its time is up, so a fast
  // server is measured over enough bytes and a throttled one does not take minutes.
  const uint64_t phase_ns = static_cast<uint64_t>(settings.seconds * 1e9);
  uint64_t written = 0;
  if (error == 0) {
    uint64_t start = MonotonicNs();
    while (written < size && error == 0 && MonotonicNs() - start < phase_ns) {
      int status = fs.Write(file, written, buffer.data(), std::min(kProbeRecord, size - written));
      if (status != 0)
        fail("write", status);
      else
        written += std::min(kProbeRecord, size - written);
    }
    if (error == 0) {
      int status = fs.Sync(file);
      if (status != 0) fail("fsync", status);
    }
    if (error == 0)
      line.Add("write_mib_per_s", double(written) / kMiB / SecondsSince(start)).Add("write_bytes", written);
  }
  if (error == 0) {
    uint64_t start = MonotonicNs();
    uint64_t read = 0;
    while (read < written && error == 0 && MonotonicNs() - start < phase_ns) {
      int status = fs.Read(file, read, buffer.data(), std::min(kProbeRecord, written - read));
      if (status != 0)
        fail("read", status);
      else
        read += std::min(kProbeRecord, written - read);
    }
    if (error == 0) line.Add("read_mib_per_s", double(read) / kMiB / SecondsSince(start)).Add("read_bytes", read);
  }
  if (created) {
    int status = fs.Remove(name);
    if (status != 0) fail("remove", status);
  }
  if (error == 0) {
    uint64_t start = MonotonicNs();
    uint64_t operations = 0;
    for (uint64_t i = 0; i < settings.small_files && error == 0 && MonotonicNs() - start < phase_ns; ++i) {
      std::string small = fs.NameOnServer(name + "-small" + std::to_string(i), server);
      OpenFile small_file;
      int status = fs.CreateOnOneServer(small, static_cast<uint32_t>(kProbeRecord), &small_file);
      if (status == 0) status = fs.Write(small_file, 0, buffer.data(), 4096);
      if (status == 0) status = fs.Remove(small);
      if (status != 0) fail("small-file", status);
      operations += 3;
    }
    if (error == 0) line.Add("meta_ops_per_s", double(operations) / SecondsSince(start));
  }
  line.Add("status", error == 0 ? "ok" : "error");
  if (error != 0) line.Add("failed", failed).Add("errno", error).Add("error", strerror(error));
  EmitJsonLine(line);
  return error == 0 ? 0 : 1;
}

}  // namespace limpwatch::testbed::client
