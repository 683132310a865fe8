#include "limpwatch/analyzer/trace_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

std::unique_ptr<TraceReader> TraceReader::Open(const std::string& path, std::string* error) {
  std::unique_ptr<TraceReader> reader(new TraceReader());
  reader->path_ = path;
  reader->file_ = std::fopen(path.c_str(), "rb");
  if (reader->file_ == nullptr) {
    *error = "recording '" + path + "': cannot open: " + std::strerror(errno);
    return nullptr;
  }
  // Records are small and many; a larger buffer than stdio's 4 KiB halves the read calls.
  std::setvbuf(reader->file_, nullptr, _IOFBF, 1 << 16);
  struct stat status {};
  if (fstat(fileno(reader->file_), &status) != 0) {
    *error = "recording '" + path + "': cannot read: " + std::strerror(errno);
    return nullptr;
  }
  uint8_t bytes[kTraceHeaderSize];
  size_t got = std::fread(bytes, 1, sizeof bytes, reader->file_);
  if (got < sizeof bytes && std::ferror(reader->file_)) {
    *error = "recording '" + path + "': cannot read: " + std::strerror(errno);
    return nullptr;
  }
  ByteReader header(bytes, got);
  uint8_t magic[8];
  uint16_t major = 0, minor = 0;
  uint32_t header_size = 0, reserved = 0;
  if (!header.Bytes(magic, sizeof magic) || std::memcmp(magic, kTraceMagic, sizeof magic) != 0) {
    *error = "recording '" + path + "': not a limpwatch recording (bad magic)";
    return nullptr;
  }
  if (!header.U16(&major) || !header.U16(&minor) || !header.U32(&header_size) || !header.U32(&reader->tick_ms_) ||
      !header.U32(&reserved) || !header.FixedString(&reader->node_, 64)) {
    *error = "recording '" + path + "': truncated header";
    return nullptr;
  }
  if (major != kTraceVersionMajor) {
    *error = "recording '" + path + "': version " + std::to_string(major) + "." + std::to_string(minor) +
             ", this reader reads " + std::to_string(kTraceVersionMajor) + ".x";
    return nullptr;
  }
  if (header_size < kTraceHeaderSize || header_size > uint64_t(status.st_size)) {
    *error = "recording '" + path + "': bad header size " + std::to_string(header_size);
    return nullptr;
  }
  // A later minor version may have a longer header: what follows it is records.
  if (std::fseek(reader->file_, long(header_size), SEEK_SET) != 0) {
    *error = "recording '" + path + "': cannot read: " + std::strerror(errno);
    return nullptr;
  }
  reader->position_ = header_size;
  return reader;
}

TraceReader::~TraceReader() {
  if (file_ != nullptr) std::fclose(file_);
}

TraceReader::Item TraceReader::Next(TickRecord* tick, std::vector<FunctionName>* names, FlowsRecord* flows) {
  while (!ended_) {
    const uint64_t record = records_ + 1, offset = position_;
    auto where = [&] { return path_ + ": record " + std::to_string(record) + " at offset " + std::to_string(offset); };
    uint8_t head_bytes[kTraceRecordHeaderSize];
    size_t got = std::fread(head_bytes, 1, sizeof head_bytes, file_);
    if (got == 0 && !std::ferror(file_)) break;  // the end of the last whole record
    ++records_;
    ByteReader head(head_bytes, got);
    uint32_t type = 0, length = 0, crc = 0;
    if (!head.U32(&type) || !head.U32(&length) || !head.U32(&crc)) {
      problems_.push_back(where() + (std::ferror(file_) ? ": cannot read: " + std::string(std::strerror(errno))
                                                      : ": truncated record header (the writer stopped here)"));
      break;
    }
    if (length > kTraceMaxPayload) {
      problems_.push_back(where() + ": length " + std::to_string(length) + " is impossible; the rest is unreadable");
      break;
    }
    payload_.resize(length);
    if (std::fread(payload_.data(), 1, length, file_) != length) {
      problems_.push_back(where() + (std::ferror(file_) ? ": cannot read: " + std::string(std::strerror(errno))
                                                      : ": truncated payload (the writer stopped here)"));
      break;
    }
    position_ += kTraceRecordHeaderSize + length;
    uint8_t type_bytes[4];
    for (int index = 0; index < 4; ++index) type_bytes[index] = static_cast<uint8_t>(type >> (8 * index));
    if (Crc32(payload_.data(), length, Crc32(type_bytes, 4)) != crc) {
      problems_.push_back(where() + ": CRC mismatch, record skipped");
      continue;
    }
    if (type == static_cast<uint32_t>(TraceRecordType::kTick)) {
      *tick = TickRecord{};
      if (DecodeTickRecord(ByteReader(payload_.data(), length), tick)) return Item::kTick;
      problems_.push_back(where() + ": malformed tick record, skipped");
    } else if (type == static_cast<uint32_t>(TraceRecordType::kFlows)) {
      if (flows == nullptr) continue;
      if (DecodeFlowsRecord(payload_.data(), length, flows)) return Item::kFlows;
      problems_.push_back(where() + ": malformed flows record, skipped");
    } else if (type == static_cast<uint32_t>(TraceRecordType::kNames)) {
      names->clear();
      if (DecodeNamesRecord(ByteReader(payload_.data(), length), names)) return Item::kNames;
      problems_.push_back(where() + ": malformed names record, skipped");
    } else {
      problems_.push_back(where() + ": unknown record type " + std::to_string(type) + ", skipped");
    }
  }
  ended_ = true;
  return Item::kEnd;
}

bool ReadTrace(const std::string& path, Trace* trace, std::string* error) {
  std::unique_ptr<TraceReader> reader = TraceReader::Open(path, error);
  if (!reader) return false;
  *trace = Trace{};
  trace->path = path;
  trace->node = reader->node();
  trace->tick_ms = reader->tick_ms();
  TickRecord tick;
  std::vector<FunctionName> names;
  for (;;) {
    TraceReader::Item item = reader->Next(&tick, &names);
    if (item == TraceReader::Item::kEnd) break;
    if (item == TraceReader::Item::kTick) {
      trace->ticks.push_back(std::move(tick));
    } else {
      for (FunctionName& name : names) trace->names.push_back(std::move(name));
    }
  }
  trace->problems = reader->problems();
  return true;
}

}  // namespace limpwatch::analyzer
