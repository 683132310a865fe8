#include "limpwatch/analyzer/trace_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "byte_io.h"
#include "file_appender.h"

namespace limpwatch::analyzer {

std::string ExpandRecordPath(const std::string& pattern, const std::string& node, int pid) {
  std::string path;
  for (size_t index = 0; index < pattern.size(); ++index) {
    if (pattern[index] == '%' && index + 1 < pattern.size()) {
      char code = pattern[index + 1];
      if (code == 'n') {
        path += node;
        ++index;
        continue;
      }
      if (code == 'p') {
        path += std::to_string(pid);
        ++index;
        continue;
      }
    }
    path += pattern[index];
  }
  return path;
}

std::unique_ptr<TraceWriter> TraceWriter::Open(const std::string& path, const std::string& node, uint32_t tick_ms,
                                               std::string* error) {
  std::unique_ptr<TraceWriter> writer(new TraceWriter());
  std::string problem;
  // The recording is this server's alone: a record torn by a full disk is cut off again.
  writer->file_ = FileAppender::Open(path, &problem, FileAppender::TornWrite::kCutBack);
  if (!writer->file_) {
    *error = "recording: " + problem;
    return nullptr;
  }
  if (writer->file_->size() == 0 && !writer->file_->Append(EncodeTraceHeader(node, tick_ms))) {
    *error = "recording '" + path + "': cannot write its header";
    return nullptr;
  }
  return writer;
}

TraceWriter::~TraceWriter() = default;

bool TraceWriter::uses_io_uring() const { return file_->uses_io_uring(); }

bool TraceWriter::io_uring_refused() const { return file_->io_uring_refused(); }

uint64_t TraceWriter::failed_writes() const { return file_->failed_writes() + oversized_records_; }

bool TraceWriter::Append(TraceRecordType type, const std::vector<uint8_t>& payload) {
  if (payload.size() > kTraceMaxPayload) {
    ++oversized_records_;
    return false;
  }
  ByteWriter record;
  record.U32(static_cast<uint32_t>(type));
  record.U32(static_cast<uint32_t>(payload.size()));
  uint8_t type_bytes[4];
  for (int index = 0; index < 4; ++index) type_bytes[index] = static_cast<uint8_t>(uint32_t(type) >> (8 * index));
  uint32_t crc = Crc32(type_bytes, 4);
  crc = Crc32(payload.data(), payload.size(), crc);
  record.U32(crc);
  record.Bytes(payload.data(), payload.size());
  return file_->Append(record.Take());
}

bool TraceWriter::Flush() { return file_->Flush(); }

void TraceWriter::Collect() { file_->Collect(); }

bool ReadTrace(const std::string& path, Trace* trace, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "recording '" + path + "': cannot open: " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  *trace = Trace{};
  trace->path = path;
  ByteReader header(bytes.data(), bytes.size());
  uint8_t magic[8];
  uint16_t major = 0, minor = 0;
  uint32_t header_size = 0, reserved = 0;
  if (!header.Bytes(magic, sizeof magic) || std::memcmp(magic, kTraceMagic, sizeof magic) != 0) {
    *error = "recording '" + path + "': not a limpwatch recording (bad magic)";
    return false;
  }
  if (!header.U16(&major) || !header.U16(&minor) || !header.U32(&header_size) || !header.U32(&trace->tick_ms) ||
      !header.U32(&reserved) || !header.FixedString(&trace->node, 64)) {
    *error = "recording '" + path + "': truncated header";
    return false;
  }
  if (major != kTraceVersionMajor) {
    *error = "recording '" + path + "': version " + std::to_string(major) + "." + std::to_string(minor) +
             ", this reader reads " + std::to_string(kTraceVersionMajor) + ".x";
    return false;
  }
  if (header_size < kTraceHeaderSize || header_size > bytes.size()) {
    *error = "recording '" + path + "': bad header size " + std::to_string(header_size);
    return false;
  }
  size_t position = header_size;
  for (size_t record = 1; position < bytes.size(); ++record) {
    std::string where = path + ": record " + std::to_string(record) + " at offset " + std::to_string(position);
    ByteReader head(bytes.data() + position, bytes.size() - position);
    uint32_t type = 0, length = 0, crc = 0;
    if (!head.U32(&type) || !head.U32(&length) || !head.U32(&crc)) {
      trace->problems.push_back(where + ": truncated record header (the writer stopped here)");
      break;
    }
    if (length > kTraceMaxPayload) {
      trace->problems.push_back(where + ": length " + std::to_string(length) + " is impossible; the rest is unreadable");
      break;
    }
    if (length > head.remaining()) {
      trace->problems.push_back(where + ": truncated payload (the writer stopped here)");
      break;
    }
    const uint8_t* payload = bytes.data() + position + kTraceRecordHeaderSize;
    position += kTraceRecordHeaderSize + length;
    uint8_t type_bytes[4];
    for (int index = 0; index < 4; ++index) type_bytes[index] = static_cast<uint8_t>(type >> (8 * index));
    if (Crc32(payload, length, Crc32(type_bytes, 4)) != crc) {
      trace->problems.push_back(where + ": CRC mismatch, record skipped");
      continue;
    }
    if (type == static_cast<uint32_t>(TraceRecordType::kTick)) {
      TickRecord tick;
      if (DecodeTickRecord(ByteReader(payload, length), &tick)) {
        trace->ticks.push_back(std::move(tick));
      } else {
        trace->problems.push_back(where + ": malformed tick record, skipped");
      }
    } else if (type == static_cast<uint32_t>(TraceRecordType::kNames)) {
      if (!DecodeNamesRecord(ByteReader(payload, length), &trace->names)) {
        trace->problems.push_back(where + ": malformed names record, skipped");
      }
    } else {
      trace->problems.push_back(where + ": unknown record type " + std::to_string(type) + ", skipped");
    }
  }
  return true;
}

}  // namespace limpwatch::analyzer
