// Writes the recording fuzz target's seed corpus: recordings written by the
// analyzer's own writer (TraceWriter), one file each: a header alone, names
// and ticks of several shapes, two servers' worth of names, ticks out of
// order, and one whose writer stopped in the middle of a record.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"

namespace {

using namespace limpwatch::analyzer;

TickRecord MakeTick(const std::string& node, uint64_t tick, size_t functions, uint32_t seed) {
  TickRecord record;
  record.node = node;
  record.tick = tick;
  record.tick_ms = 1000;
  record.unix_ms = (tick + 1) * 1000;
  for (size_t index = 0; index < functions; ++index) {
    FunctionTick function;
    function.name_hash = limpwatch::shm::FunctionNameHash("function_" + std::to_string(index));
    function.calls = 100 * (index + 1) + seed;
    function.self_ms = 1.5 * double(index + 1) + seed * 0.01;
    function.samples = index % 3;
    record.functions.push_back(function);
  }
  std::sort(record.functions.begin(), record.functions.end(),
            [](const FunctionTick& a, const FunctionTick& b) { return a.name_hash < b.name_hash; });
  record.io = {.dread_ms = 0.4, .dwrite_ms = 2.5, .nsread_ms = 0.1, .ncread_ms = 0, .file_reads = 12,
               .file_writes = 40, .socket_reads = 7, .request_bytes = 65536, .errors = seed % 2};
  record.node_stats = {.valid = seed % 2 == 0, .interrupts = 1200, .pages_allocated = 300,
                       .heap_growth_bytes = 4096, .disk_requests = 52, .disk_iosize_kb = 64, .disk_svctm_ms = 0.8,
                       .disk_await_ms = 1.9, .disk_utilisation = 0.35, .cpu_ms = 210};
  return record;
}

std::vector<FunctionName> Names(size_t count) {
  std::vector<FunctionName> names;
  for (size_t index = 0; index < count; ++index) {
    std::string name = "function_" + std::to_string(index);
    names.push_back({limpwatch::shm::FunctionNameHash(name), name});
  }
  return names;
}

bool Write(const std::string& path, const std::string& node, uint32_t tick_ms, const std::vector<FunctionName>& names,
           const std::vector<TickRecord>& ticks) {
  unlink(path.c_str());
  std::string error;
  auto writer = TraceWriter::Open(path, node, tick_ms, &error);
  if (!writer) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return false;
  }
  if (!names.empty() && !writer->Append(TraceRecordType::kNames, EncodeNamesRecord(names))) return false;
  for (const TickRecord& tick : ticks) {
    if (!writer->Append(TraceRecordType::kTick, EncodeTickRecord(tick))) return false;
  }
  return writer->Flush();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  const std::string directory = argv[1];
  bool ok = Write(directory + "/header-only.lwtrace", "server1", 1000, {}, {});

  std::vector<TickRecord> steady;
  for (uint64_t tick = 0; tick < 3; ++tick) steady.push_back(MakeTick("server1", 1714560000 + tick, 4, uint32_t(tick)));
  ok = ok && Write(directory + "/names-and-ticks.lwtrace", "server1", 1000, Names(4), steady);

  std::vector<TickRecord> shuffled = {MakeTick("server2", 1714560005, 2, 1), MakeTick("server2", 1714560003, 0, 2),
                                      MakeTick("server2", 1714560005, 1, 3)};
  ok = ok && Write(directory + "/out-of-order.lwtrace", "server2", 1000, Names(2), shuffled);

  const std::string long_node(63, 'n');
  ok = ok && Write(directory + "/long-node-short-ticks.lwtrace", long_node, 250, Names(1),
                   {MakeTick(long_node, 42, 1, 0)});

  const std::string torn = directory + "/torn-tail.lwtrace";
  ok = ok && Write(torn, "server3", 1000, Names(3), steady);
  struct stat status {};
  ok = ok && stat(torn.c_str(), &status) == 0 && truncate(torn.c_str(), status.st_size - 17) == 0;
  if (!ok) {
    std::fprintf(stderr, "cannot write the recording seeds to %s\n", directory.c_str());
    return 1;
  }
  std::printf("wrote 5 seed recordings to %s\n", directory.c_str());
  return 0;
}
