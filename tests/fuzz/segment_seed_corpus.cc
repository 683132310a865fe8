// Writes the segment fuzz target's seed corpus: the byte images of real
// segments, created by the writer the runtime uses (in /dev/shm, removed
// again) with small geometries, and filled the way the runtime, the sampler
// and the analyzer fill them: resolved and unresolved symbols, an active
// thread with open frames, retired totals, errnos, node metrics, alarms
// that wrapped the ring, sampled functions, peer status. One file each.
#include <unistd.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"
#include "limpwatch/shm/snapshot.h"

namespace {

using namespace limpwatch::shm;

void Resolve(const SegmentView& view, uint32_t id, uint64_t address, const std::string& name) {
  SymbolEntry& entry = view.symbols()[id];
  entry.address.store(address);
  entry.name_hash = FunctionNameHash(name);
  size_t length = std::min(name.size(), kSymbolNameSize - 1);
  std::memcpy(entry.name, name.data(), length);
  entry.name[length] = '\0';
  entry.name_length = static_cast<uint32_t>(length);
  entry.state.store(static_cast<uint32_t>(SymbolState::kResolved));
}

void Fill(const SegmentView& view) {
  SegmentHeader& header = *view.header();
  const uint32_t functions = header.max_functions;
  const char* names[] = {"dbpf_bstream_direct_write", "BMI_tcp_post_recv", "PINT_state_machine_next",
                         "job_testcontext"};
  for (uint32_t id = 0; id < functions; ++id) {
    if (id == 2) {  // registered, name not yet resolved
      view.symbols()[id].address.store(0x401000 + id * 0x40);
      view.symbols()[id].state.store(static_cast<uint32_t>(SymbolState::kRegistered));
      continue;
    }
    Resolve(view, id, 0x401000 + id * 0x40, names[id % 4]);
  }
  header.next_function_id.store(functions);
  header.counters.functions_registered.store(functions);
  header.counters.threads_started.store(3);
  header.counters.threads_retired.store(1);

  ThreadSlotHeader& slot = *view.slot(0);
  slot.state.store(static_cast<uint32_t>(SlotState::kActive));
  slot.tid.store(4242);
  slot.generation.store(1);
  slot.depth.store(header.stack_depth + 1);  // deeper than the stack holds
  for (uint32_t level = 0; level < header.stack_depth; ++level) {
    StackFrame& frame = view.frames(0)[level];
    frame.address.store(0x401000 + (level % functions) * 0x40);
    frame.function.store(level % functions);
    frame.flags.store(level == 0 ? uint32_t{kFrameInherited} : 0u);
    frame.entry_ticks.store(1000 + level);
  }
  for (uint32_t id = 0; id < functions; ++id) {
    view.counters(0)[id].calls.store(10 * (id + 1));
    view.counters(0)[id].self_ticks.store(1000 * (id + 1));
    view.counters(0)[id].total_ticks.store(2000 * (id + 1));
    view.retired_counters()[id].calls.store(id + 1);
  }
  IoBlock& io = *view.io(0);
  io.counters[0][0].calls.store(5);
  io.counters[0][0].bytes.store(4096 * 5);
  io.counters[1][1].calls.store(7);
  io.counters[1][1].errors.store(1);
  io.errnos[0].key.store(((uint32_t{104} << 16) | (1u << 8) | 1u) + 1);  // ECONNRESET on a TCP write
  io.errnos[0].count.store(1);
  io.socket_reads[0].calls.store(3);
  view.retired()->threads.store(1);
  view.retired()->io.errnos[0].key.store(((uint32_t{28} << 16) | 1u) + 1);  // ENOSPC on a file write
  view.retired()->io.errnos[0].count.store(2);

  NodeMetricsRecord& metrics = *view.node_metrics();
  metrics.interrupts.store(123456);
  metrics.process_cpu_ns.store(987654321);
  metrics.disk_state.store(static_cast<uint32_t>(DiskState::kDevice));
  metrics.disk_major.store(254);
  StoreNameWords("vda1", metrics.disk_name, std::size(metrics.disk_name));
  metrics.sequence.store(2);

  for (int index = 0; index < 3; ++index) {  // one more than a ring of 2 holds
    limpwatch::analyzer::Alarm alarm;
    alarm.time_unix_ms = 1714560000000ull + uint64_t(index) * 1000;
    alarm.server = "server" + std::to_string(index + 1);
    alarm.metrics = {"dwrite", "time"};
    alarm.resource = Resource::kDisk;
    alarm.score = 12.5 + index;
    alarm.threshold = 3;
    limpwatch::analyzer::PublishAlarm(view, alarm);
  }

  SampleTableHeader& samples = *view.sample_table();
  samples.samples_total.store(100);
  samples.source.store(static_cast<uint32_t>(SampleSource::kPerfCpuClock));
  samples.rate_hz.store(199);
  SampledFunction& sampled = view.sampled_functions()[0];
  std::strcpy(sampled.name, "dbpf_bstream_direct_write");
  std::strcpy(sampled.image, "pvfs2-server");
  sampled.image_kind = static_cast<uint32_t>(ImageKind::kExecutable);
  sampled.samples.store(40);
  sampled.name_hash.store(FunctionNameHash("dbpf_bstream_direct_write"));

  PeerStatusBlock& peers = *view.peer_status();
  peers.peers_configured.store(3);
  peers.peers_listed.store(2);
  peers.datagrams_received.store(30);
  peers.datagrams_accepted.store(29);
  StoreNameWords("server2", peers.entries[0].name, std::size(peers.entries[0].name));
  peers.entries[0].heard.store(1);
  peers.entries[0].accepted.store(15);
  StoreNameWords("server3", peers.entries[1].name, std::size(peers.entries[1].name));
  peers.sequence.store(2);
  view.analyzer_health()->ticks.store(12);

  ScoreStatusBlock& scores = *view.score_status();
  scores.window.store(41);
  scores.servers_compared.store(3);
  scores.metrics_listed.store(2);
  StoreNameWords("dread", scores.entries[0].metric, std::size(scores.entries[0].metric));
  scores.entries[0].score_bits.store(std::bit_cast<uint64_t>(31.5));
  scores.entries[0].threshold_bits.store(std::bit_cast<uint64_t>(19.8));
  scores.entries[0].flags.store(kScoreAnomalous);
  StoreNameWords("time", scores.entries[1].metric, std::size(scores.entries[1].metric));
  scores.sequence.store(2);
}

bool WriteImage(const std::string& path, const SegmentView& view, uint64_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(view.base()), static_cast<std::streamsize>(size));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  const std::string directory = argv[1];
  struct Shape {
    const char* file;
    Geometry geometry;
    bool filled;
    OwnerState state;
  };
  const Shape shapes[] = {
      {"empty-smallest.bin", {1, 1, 1, 1, 1}, false, OwnerState::kRunning},
      {"filled-small.bin", {4, 2, 4, 2, 2}, true, OwnerState::kRunning},
      {"filled-exited.bin", {4, 1, 2, 2, 1}, true, OwnerState::kExited},
  };
  for (const Shape& shape : shapes) {
    const std::string object = SegmentObjectName("fuzzseed", getpid());
    OwnerInfo owner;
    owner.name = "server1";
    owner.program = "pvfs2-server";
    owner.pid = getpid();
    owner.parent_pid = getppid();
    std::string error;
    auto writer = SegmentWriter::Create(object, shape.geometry, owner, &error);
    if (!writer) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    writer->Remove();  // the mapping stays; nothing is left in /dev/shm
    if (shape.filled) Fill(writer->view());
    writer->view().header()->owner_state.store(static_cast<uint32_t>(shape.state));
    std::string path = directory + "/" + shape.file;
    if (!WriteImage(path, writer->view(), writer->size())) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  std::printf("wrote %zu segment images to %s\n", std::size(shapes), directory.c_str());
  return 0;
}
