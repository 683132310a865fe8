// Recordings of tick records: the trace file `LIMPWATCH_RECORD` appends to
// and `limpwatch train` / `limpwatch diagnose` read.
//
//   +--------------------------------------+
//   | FileHeader (128 bytes)               |  "LWTRACE\0", version, node, tick length
//   +--------------------------------------+
//   | RecordHeader | payload               |  type, payload length, CRC-32 of type+payload
//   | RecordHeader | payload               |
//   | ...                                  |
//
// Integers are little-endian and written field by field, never as memory
// images of structs. A record whose CRC does not match is reported and
// skipped; a record cut short at the end of the file (the writer died) is
// reported and ends the reading; everything before it is kept.
#ifndef LIMPWATCH_ANALYZER_TRACE_FILE_H_
#define LIMPWATCH_ANALYZER_TRACE_FILE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "limpwatch/analyzer/flow_record.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

inline constexpr char kTraceMagic[8] = {'L', 'W', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint16_t kTraceVersionMajor = 1;
inline constexpr uint16_t kTraceVersionMinor = 1;  // 1: flows records
inline constexpr uint32_t kTraceHeaderSize = 128;
inline constexpr uint32_t kTraceRecordHeaderSize = 12;
inline constexpr uint32_t kTraceMaxPayload = 16u << 20;

enum class TraceRecordType : uint32_t {
  kTick = 1,
  kNames = 2,
  kFlows = 3,  // since 1.1: the request flows read in a tick (flow_record.h)
};

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

std::vector<uint8_t> EncodeTraceHeader(const std::string& node, uint32_t tick_ms);
std::vector<uint8_t> EncodeTickRecord(const TickRecord& tick);
std::vector<uint8_t> EncodeNamesRecord(const std::vector<FunctionName>& names);

struct Trace {
  std::string path;
  std::string node;
  uint32_t tick_ms = 0;
  std::vector<TickRecord> ticks;
  std::vector<FunctionName> names;  // flows records are not read here: TraceReader reads them one at a time
  std::vector<std::string> problems;  // one line each: CRC mismatch, truncated tail, ...
};

// Reads a whole trace. Returns false with *error set (one line naming the
// file) when the file cannot be read or is not a trace of a known version.
bool ReadTrace(const std::string& path, Trace* trace, std::string* error);

// Reads a trace record by record, holding one record at a time, so that a
// recording of any length can be read in bounded memory. ReadTrace reads
// through it: both see the same records and report the same problems.
class TraceReader {
 public:
  enum class Item { kTick, kNames, kFlows, kEnd };

  // Null with a one-line *error naming the file when it cannot be opened or
  // is not a trace of a known version.
  static std::unique_ptr<TraceReader> Open(const std::string& path, std::string* error);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  // The next good record: a tick into *tick, the names of a names record
  // into *names (replaced, not appended to), or a flows record into *flows
  // (without `flows`, flows records are passed over). kEnd at the end of the
  // file or at a record that makes the rest unreadable. Skipped records and
  // the reason the reading ended are added to problems().
  Item Next(TickRecord* tick, std::vector<FunctionName>* names, FlowsRecord* flows = nullptr);

  const std::string& path() const { return path_; }
  const std::string& node() const { return node_; }
  uint32_t tick_ms() const { return tick_ms_; }
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  TraceReader() = default;

  std::string path_;
  std::string node_;
  uint32_t tick_ms_ = 0;
  std::FILE* file_ = nullptr;
  uint64_t position_ = 0;
  uint64_t records_ = 0;
  bool ended_ = false;
  std::vector<uint8_t> payload_;  // reused from record to record
  std::vector<std::string> problems_;
};

class FileAppender;

// Appends records to a trace file through io_uring, falling back to plain
// writes when the kernel refuses io_uring (or LIMPWATCH_IO_URING=0). Append
// never waits for the disk; a record that finds 8 MiB still queued is
// refused and counted in failed_writes() (file_appender.h).
class TraceWriter {
 public:
  // Creates or appends to `path` (a new file gets a header). Null + *error on failure.
  static std::unique_ptr<TraceWriter> Open(const std::string& path, const std::string& node, uint32_t tick_ms,
                                           std::string* error);
  ~TraceWriter();  // waits for every write in flight
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Queues the record; the disk is not waited for (file_appender.h).
  bool Append(TraceRecordType type, const std::vector<uint8_t>& payload);
  // Waits for every write in flight; false if any failed since the last Flush.
  bool Flush();
  // Takes the writes that finished without waiting (file_appender.h).
  void Collect();
  bool uses_io_uring() const;
  bool io_uring_refused() const;  // wanted, and the kernel refused it
  // Records lost: the file's failed or refused writes, and records too large
  // to be a record (kTraceMaxPayload).
  uint64_t failed_writes() const;

 private:
  TraceWriter() = default;

  std::unique_ptr<FileAppender> file_;
  uint64_t oversized_records_ = 0;
};

// "%n" -> node name, "%p" -> pid: one recording per server from one setting.
std::string ExpandRecordPath(const std::string& pattern, const std::string& node, int pid);

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_TRACE_FILE_H_
