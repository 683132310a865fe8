// Encoding and decoding of trace records (trace_file.h).
#include <cstring>

#include "limpwatch/analyzer/trace_file.h"
#include "byte_io.h"

namespace limpwatch::analyzer {

uint32_t Crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const auto table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t index = 0; index < 256; ++index) {
      uint32_t value = index;
      for (int bit = 0; bit < 8; ++bit) value = (value & 1) ? 0xedb88320u ^ (value >> 1) : value >> 1;
      entries[index] = value;
    }
    return entries;
  }();
  crc = ~crc;
  for (size_t index = 0; index < size; ++index) crc = table[(crc ^ data[index]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

std::vector<uint8_t> EncodeTraceHeader(const std::string& node, uint32_t tick_ms) {
  ByteWriter out;
  out.Bytes(reinterpret_cast<const uint8_t*>(kTraceMagic), sizeof kTraceMagic);
  out.U16(kTraceVersionMajor);
  out.U16(kTraceVersionMinor);
  out.U32(kTraceHeaderSize);
  out.U32(tick_ms);
  out.U32(0);
  out.FixedString(node, 64);
  while (out.size() < kTraceHeaderSize) out.U8(0);
  return out.Take();
}

std::vector<uint8_t> EncodeTickRecord(const TickRecord& tick) {
  ByteWriter out;
  out.String(tick.node);
  out.U64(tick.tick);
  out.U64(tick.unix_ms);
  out.U32(tick.tick_ms);
  out.U32(static_cast<uint32_t>(tick.functions.size()));
  for (const FunctionTick& function : tick.functions) {
    out.U64(function.name_hash);
    out.U64(function.calls);
    out.F64(function.self_ms);
    out.U64(function.samples);
  }
  const IoTick& io = tick.io;
  for (double value : {io.dread_ms, io.dwrite_ms, io.nsread_ms, io.ncread_ms, io.request_bytes}) out.F64(value);
  for (uint64_t value : {io.file_reads, io.file_writes, io.socket_reads, io.errors}) out.U64(value);
  const NodeTick& node = tick.node_stats;
  out.U8(node.valid ? 1 : 0);
  for (double value : {node.interrupts, node.pages_allocated, node.heap_growth_bytes, node.disk_requests,
                       node.disk_iosize_kb, node.disk_svctm_ms, node.disk_await_ms, node.disk_utilisation,
                       node.cpu_ms}) {
    out.F64(value);
  }
  return out.Take();
}

std::vector<uint8_t> EncodeNamesRecord(const std::vector<FunctionName>& names) {
  ByteWriter out;
  out.U32(static_cast<uint32_t>(names.size()));
  for (const FunctionName& name : names) {
    out.U64(name.name_hash);
    out.String(name.name);
  }
  return out.Take();
}

bool DecodeTickRecord(ByteReader in, TickRecord* tick) {
  uint32_t count = 0;
  if (!in.String(&tick->node) || !in.U64(&tick->tick) || !in.U64(&tick->unix_ms) || !in.U32(&tick->tick_ms) ||
      !in.U32(&count) || count > in.remaining() / 32) {
    return false;
  }
  tick->functions.resize(count);
  for (FunctionTick& function : tick->functions) {
    if (!in.U64(&function.name_hash) || !in.U64(&function.calls) || !in.F64(&function.self_ms) ||
        !in.U64(&function.samples)) {
      return false;
    }
  }
  IoTick& io = tick->io;
  NodeTick& node = tick->node_stats;
  uint8_t valid = 0;
  bool ok = in.F64(&io.dread_ms) && in.F64(&io.dwrite_ms) && in.F64(&io.nsread_ms) && in.F64(&io.ncread_ms) &&
            in.F64(&io.request_bytes) && in.U64(&io.file_reads) && in.U64(&io.file_writes) &&
            in.U64(&io.socket_reads) && in.U64(&io.errors) && in.U8(&valid) && in.F64(&node.interrupts) &&
            in.F64(&node.pages_allocated) && in.F64(&node.heap_growth_bytes) && in.F64(&node.disk_requests) &&
            in.F64(&node.disk_iosize_kb) && in.F64(&node.disk_svctm_ms) && in.F64(&node.disk_await_ms) &&
            in.F64(&node.disk_utilisation) && in.F64(&node.cpu_ms);
  node.valid = valid != 0;
  return ok && in.remaining() == 0;
}

bool DecodeNamesRecord(ByteReader in, std::vector<FunctionName>* names) {
  uint32_t count = 0;
  if (!in.U32(&count) || count > in.remaining() / 12) return false;
  for (uint32_t index = 0; index < count; ++index) {
    FunctionName name;
    if (!in.U64(&name.name_hash) || !in.String(&name.name)) return false;
    names->push_back(std::move(name));
  }
  return in.remaining() == 0;
}

}  // namespace limpwatch::analyzer
