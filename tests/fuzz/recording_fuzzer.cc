// Fuzz target for the recording reader: the trace files LIMPWATCH_RECORD
// writes and `limpwatch train` / `diagnose` / `report` read
// (analyzer/trace_file.h, and LoadRun of tools/limpwatch/recordings.h, which
// is how those commands load them).
//
// Each input is read as it is, and again with every record's CRC made right
// (as the fuzz target of the peer wire re-signs), so mutations behind a
// valid CRC reach the record decoders too.
//
// Invariants, for every input:
//   - a refusal is one line naming the recording;
//   - an accepted recording, written again by the analyzer's own writer,
//     reads back without a problem as the same node (to the 63 characters
//     the header holds), tick length, names and ticks;
//   - the commands' loader gives each server's ticks in strictly increasing
//     order.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "limpwatch/analyzer/trace_file.h"
#include "recordings.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

void Check(bool condition, const char* invariant) { Require(condition, "recording", invariant); }

uint32_t LittleU32(const std::vector<uint8_t>& bytes, size_t at) {
  uint32_t value = 0;
  for (size_t index = 0; index < 4; ++index) value |= uint32_t{bytes[at + index]} << (8 * index);
  return value;
}

// The input with the CRC of every record that fits recomputed.
std::vector<uint8_t> WithCrcsMadeRight(std::span<const uint8_t> input) {
  std::vector<uint8_t> bytes(input.begin(), input.end());
  if (bytes.size() < 16) return bytes;
  size_t position = LittleU32(bytes, 12);  // header size
  if (position < kTraceHeaderSize) return bytes;
  while (position + kTraceRecordHeaderSize <= bytes.size()) {
    uint32_t length = LittleU32(bytes, position + 4);
    if (length > kTraceMaxPayload || length > bytes.size() - position - kTraceRecordHeaderSize) break;
    uint32_t crc = Crc32(bytes.data() + position, 4);
    crc = Crc32(bytes.data() + position + kTraceRecordHeaderSize, length, crc);
    for (size_t index = 0; index < 4; ++index) bytes[position + 8 + index] = static_cast<uint8_t>(crc >> (8 * index));
    position += kTraceRecordHeaderSize + length;
  }
  return bytes;
}

bool SameDouble(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool SameTick(const TickRecord& a, const TickRecord& b) {
  if (a.node != b.node || a.tick != b.tick || a.unix_ms != b.unix_ms || a.tick_ms != b.tick_ms ||
      a.functions.size() != b.functions.size()) {
    return false;
  }
  for (size_t index = 0; index < a.functions.size(); ++index) {
    const FunctionTick& x = a.functions[index];
    const FunctionTick& y = b.functions[index];
    if (x.name_hash != y.name_hash || x.calls != y.calls || !SameDouble(x.self_ms, y.self_ms) ||
        x.samples != y.samples) {
      return false;
    }
  }
  const IoTick& x = a.io;
  const IoTick& y = b.io;
  const NodeTick& m = a.node_stats;
  const NodeTick& n = b.node_stats;
  return SameDouble(x.dread_ms, y.dread_ms) && SameDouble(x.dwrite_ms, y.dwrite_ms) &&
         SameDouble(x.nsread_ms, y.nsread_ms) && SameDouble(x.ncread_ms, y.ncread_ms) && x.file_reads == y.file_reads &&
         x.file_writes == y.file_writes && x.socket_reads == y.socket_reads &&
         SameDouble(x.request_bytes, y.request_bytes) && x.errors == y.errors && m.valid == n.valid &&
         SameDouble(m.interrupts, n.interrupts) && SameDouble(m.pages_allocated, n.pages_allocated) &&
         SameDouble(m.heap_growth_bytes, n.heap_growth_bytes) && SameDouble(m.disk_requests, n.disk_requests) &&
         SameDouble(m.disk_iosize_kb, n.disk_iosize_kb) && SameDouble(m.disk_svctm_ms, n.disk_svctm_ms) &&
         SameDouble(m.disk_await_ms, n.disk_await_ms) && SameDouble(m.disk_utilisation, n.disk_utilisation) &&
         SameDouble(m.cpu_ms, n.cpu_ms);
}

void CheckRecording(std::span<const uint8_t> bytes) {
  static limpwatch::fuzzing::InputFile file;
  const std::string& path = file.Write(bytes);
  Trace trace;
  std::string error;
  if (!ReadTrace(path, &trace, &error)) {
    Check(error.compare(0, 12 + path.size(), "recording '" + path + "'") == 0, "a refusal names the recording");
    Check(error.find('\n') == std::string::npos, "in one line");
  } else {
    // Written again, with the writer the analyzer records with.
    static limpwatch::fuzzing::InputFile rewritten;
    rewritten.Write(std::span<const uint8_t>{});
    std::string open_error;
    auto writer = TraceWriter::Open(rewritten.path(), trace.node, trace.tick_ms, &open_error);
    Check(writer != nullptr, "the writer opens a file");
    if (!trace.names.empty()) Check(writer->Append(TraceRecordType::kNames, EncodeNamesRecord(trace.names)), "names");
    for (const TickRecord& tick : trace.ticks) {
      Check(writer->Append(TraceRecordType::kTick, EncodeTickRecord(tick)), "the writer takes every tick");
    }
    Check(writer->Flush(), "and writes them");
    writer.reset();
    Trace again;
    Check(ReadTrace(rewritten.path(), &again, &error), "what the writer wrote reads");
    Check(again.problems.empty(), "without a problem");
    Check(again.node == trace.node.substr(0, 63) && again.tick_ms == trace.tick_ms, "as the same node and tick");
    Check(again.names.size() == trace.names.size(), "with the same number of names");
    for (size_t index = 0; index < trace.names.size(); ++index) {
      Check(again.names[index].name_hash == trace.names[index].name_hash &&
                again.names[index].name == trace.names[index].name,
            "and the same names");
    }
    Check(again.ticks.size() == trace.ticks.size(), "with the same number of ticks");
    for (size_t index = 0; index < trace.ticks.size(); ++index) {
      Check(SameTick(again.ticks[index], trace.ticks[index]), "and the same ticks");
    }
  }

  // Flows records, read one at a time: what decodes encodes to a record
  // that decodes to the same.
  std::string open_error;
  if (std::unique_ptr<TraceReader> reader = TraceReader::Open(path, &open_error)) {
    TickRecord tick;
    std::vector<FunctionName> names;
    FlowsRecord flows;
    for (TraceReader::Item item; (item = reader->Next(&tick, &names, &flows)) != TraceReader::Item::kEnd;) {
      if (item != TraceReader::Item::kFlows) continue;
      std::vector<uint8_t> encoded = EncodeFlowsRecord(flows);
      FlowsRecord again;
      Check(DecodeFlowsRecord(encoded.data(), encoded.size(), &again), "a flows record written again reads");
      Check(EncodeFlowsRecord(again) == encoded, "as the same flows");
    }
  }

  limpwatch::cli::LoadedRun run;
  std::string load_error;
  if (limpwatch::cli::LoadRun({path}, &run, &load_error)) {
    for (const auto& [node, series] : run.ticks) {
      for (size_t index = 1; index < series.size(); ++index) {
        Check(series[index - 1].tick < series[index].tick, "a server's ticks are in strictly increasing order");
      }
    }
  } else {
    Check(!load_error.empty() && load_error.find('\n') == std::string::npos, "a loader's refusal is one line");
  }
}

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer::fuzzing;
  // Plain writes for the rewritten copy: a ring per input would cost more
  // than the reading under test, and both paths write the same bytes.
  static const bool plain_writes = setenv("LIMPWATCH_IO_URING", "0", 1) == 0;
  Check(plain_writes, "LIMPWATCH_IO_URING=0 is set");
  std::span<const uint8_t> input(data, size);
  CheckRecording(input);
  std::vector<uint8_t> repaired = WithCrcsMadeRight(input);
  CheckRecording(repaired);
  return 0;
}
