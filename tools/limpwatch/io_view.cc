#include "io_view.h"

#include <cmath>
#include <string>
#include <vector>

#include "format.h"
#include "table.h"

namespace limpwatch::cli {
namespace {

using analyzer::FdKindName;
using analyzer::IoOperationName;

std::string MsOrDash(const analyzer::ServiceTime& time) {
  return time.calls == 0 ? "-" : FormatFixed(time.ms_per_call, 3) + " ms";
}

// "dread 0.021 ms (60.0/s)".
std::string Seed001Item(const char* name, const analyzer::ServiceTime& time, double seconds) {
  std::string item = std::string(name) + " " + MsOrDash(time);
  if (time.calls != 0 && seconds > 0) item += " (" + FormatFixed(double(time.calls) / seconds, 1) + "/s)";
  return item;
}

std::string SignedFixed(double value, int decimals) { return (value >= 0 ? "+" : "") + FormatFixed(value, decimals); }

std::string DiskText(const shm::NodeMetricsValues& node) {
  return analyzer::DiskStateText(node.disk_state, node.disk_name, node.disk_major, node.disk_minor);
}

void WriteValues(JsonWriter* json, const shm::IoValues& values, double ns_per_tick, double lifetime_seconds) {
  double ns = double(values.ticks) * ns_per_tick;
  json->Field("calls", values.calls);
  json->Field("bytes", values.bytes);
  json->Field("ticks", values.ticks);
  json->Field("ns", static_cast<uint64_t>(std::llround(ns)));
  json->Field("ms_per_call", values.calls == 0 ? 0.0 : ns / 1e6 / double(values.calls));
  json->Field("errors", values.errors);
  if (lifetime_seconds > 0) {
    json->Field("calls_per_s", double(values.calls) / lifetime_seconds);
    json->Field("mb_per_s", double(values.bytes) / 1e6 / lifetime_seconds);
  }
}

const char* DiskStateKey(shm::DiskState state) {
  switch (state) {
    case shm::DiskState::kUnknown: return "unknown";
    case shm::DiskState::kDevice: return "device";
    case shm::DiskState::kNoBlockDevice: return "no_block_device";
    case shm::DiskState::kBadDirectory: return "bad_directory";
    case shm::DiskState::kNotInDiskstats: return "not_in_diskstats";
  }
  return "unknown";
}

}  // namespace

std::string RenderIoInterval(const analyzer::IoMetrics& io, const analyzer::NodeRates& node) {
  std::string out;
  if (io.operations.empty()) {
    out += "I/O  (no I/O calls in this interval)\n";
  } else {
    Table table({{"I/O"},
                 {"CALLS/S", Align::kRight},
                 {"MB/S", Align::kRight},
                 {"ms/CALL", Align::kRight},
                 {"ERRORS/S", Align::kRight}});
    for (const auto& row : io.operations) {
      table.AddRow({std::string(FdKindName(row.kind)) + " " + IoOperationName(row.operation),
                    FormatFixed(row.calls_per_s, 1), FormatFixed(row.mb_per_s, 3), MsOrDash(row.time),
                    FormatFixed(io.seconds > 0 ? double(row.time.errors) / io.seconds : 0.0, 1)});
    }
    out += table.Render();
  }
  out += Seed001Item("dread", io.dread, io.seconds) + "  " + Seed001Item("dwrite", io.dwrite, io.seconds) + "  " +
         Seed001Item("dsync", io.dsync, io.seconds) + "  " + Seed001Item("nsread", io.nsread, io.seconds) + "  " +
         Seed001Item("ncread", io.ncread, io.seconds) + "  req " + FormatFixed(io.request_bytes_per_s / 1e6, 3) +
         " MB/s\n";
  if (!io.errors.empty()) {
    std::string line = "errnos in the interval";
    for (const auto& error : io.errors) {
      line += "  " + std::string(FdKindName(error.kind)) + " " + IoOperationName(error.operation) + " " +
              analyzer::ErrnoName(error.error) + " " + std::to_string(error.count);
    }
    out += line + "\n";
  }
  if (io.untimed_calls != 0 || io.errno_overflow != 0) {
    out += "untimed calls " + std::to_string(io.untimed_calls) + "  errnos without a slot " +
           std::to_string(io.errno_overflow) + "\n";
  }
  if (!node.valid) {
    out += "node  (waiting for two node samples)\n";
    return out;
  }
  out += "node  intr " + FormatFixed(node.interrupts_per_s, 0) + "/s  ctxt " +
         FormatFixed(node.context_switches_per_s, 0) + "/s  alloc " + FormatFixed(node.allocated_mb_per_s, 2) +
         " MB/s  heap " + SignedFixed(node.heap_growth_mb_per_s, 2) + " MB/s  cpu " +
         FormatFixed(node.process_cpu_percent, 1) + "%\n";
  std::string disk = "disk  " + analyzer::DiskStateText(node.disk_state, node.disk_name, node.disk_major,
                                                         node.disk_minor);
  if (node.disk_state == shm::DiskState::kDevice) {
    disk += "  " + FormatFixed(node.disk_requests_per_s, 1) + " req/s  read " +
            FormatFixed(node.disk_read_mb_per_s, 2) + " write " + FormatFixed(node.disk_write_mb_per_s, 2) +
            " MB/s  iosize " + FormatFixed(node.disk_iosize_kb, 1) + " KiB  svctm " +
            FormatFixed(node.disk_svctm_ms, 2) + " ms  await " + FormatFixed(node.disk_await_ms, 2) + " ms  util " +
            FormatFixed(node.disk_utilization * 100.0, 1) + "%";
  }
  return out + disk + "\n";
}

std::string RenderIoTotalsText(const shm::Snapshot& s, double lifetime_seconds) {
  std::string out = "I/O (all threads, live and retired";
  out += lifetime_seconds > 0 ? "; rates over the segment's " + FormatFixed(lifetime_seconds, 1) + " s)\n" : ")\n";
  Table table({{"KIND"},
               {"OPERATION"},
               {"CALLS", Align::kRight},
               {"CALLS/S", Align::kRight},
               {"BYTES", Align::kRight},
               {"MB/S", Align::kRight},
               {"TOTAL ms", Align::kRight},
               {"ms/CALL", Align::kRight},
               {"ERRORS", Align::kRight}});
  auto rate = [&](double value) { return lifetime_seconds > 0 ? FormatFixed(value / lifetime_seconds, 3) : "-"; };
  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      const shm::IoValues& values = s.io.counters[kind][operation];
      if (values.calls == 0) continue;
      double total_ms = s.TicksToNs(values.ticks) / 1e6;
      table.AddRow({FdKindName(static_cast<shm::FdKind>(kind)), IoOperationName(static_cast<shm::IoOperation>(operation)),
                    std::to_string(values.calls), rate(double(values.calls)), std::to_string(values.bytes),
                    rate(double(values.bytes) / 1e6), FormatFixed(total_ms, 3),
                    FormatFixed(total_ms / double(values.calls), 4), std::to_string(values.errors)});
    }
  }
  out += table.row_count() == 0 ? "(no I/O calls recorded)\n" : table.Render();

  out += "\nSOCKET READS BY WHO OPENED THE CONNECTION\n";
  Table roles({{"ROLE"},
               {"CALLS", Align::kRight},
               {"BYTES", Align::kRight},
               {"TOTAL ms", Align::kRight},
               {"ms/CALL", Align::kRight},
               {"ERRORS", Align::kRight}});
  const char* role_names[shm::kSocketRoleCount] = {"accepted (nsread)", "connected (ncread)"};
  for (uint32_t role = 0; role < shm::kSocketRoleCount; ++role) {
    const shm::IoValues& values = s.io.socket_reads[role];
    double total_ms = s.TicksToNs(values.ticks) / 1e6;
    roles.AddRow({role_names[role], std::to_string(values.calls), std::to_string(values.bytes),
                  FormatFixed(total_ms, 3), values.calls == 0 ? "-" : FormatFixed(total_ms / double(values.calls), 4),
                  std::to_string(values.errors)});
  }
  out += roles.Render();

  out += "\nERRNOS\n";
  Table errnos({{"KIND"}, {"OPERATION"}, {"ERRNO"}, {"COUNT", Align::kRight}});
  for (const auto& record : s.io.errnos) {
    errnos.AddRow({FdKindName(record.kind), IoOperationName(record.operation), analyzer::ErrnoName(record.error),
                   std::to_string(record.count)});
  }
  out += errnos.row_count() == 0 ? "(none)\n" : errnos.Render();
  out += "errnos without a slot " + std::to_string(s.io.errno_overflow) + "  untimed calls " +
         std::to_string(s.io.untimed_calls) + "\n";
  return out;
}

std::string RenderNodeMetricsText(const shm::NodeMetricsValues& node) {
  std::string out = "NODE METRICS (the last sample, cumulative; `limpwatch top` shows rates)\n";
  if (!node.valid) return out + "(no sample yet)\n";
  Table fields({{"FIELD"}, {"VALUE", Align::kRight}});
  fields.AddRow({"sampled at", FormatLocalTime(node.timestamp_ns, true)});
  fields.AddRow({"interrupts", std::to_string(node.interrupts)});
  fields.AddRow({"context switches", std::to_string(node.context_switches)});
  fields.AddRow({"pages allocated", std::to_string(node.pages_allocated)});
  fields.AddRow({"heap bytes", std::to_string(node.heap_bytes)});
  fields.AddRow({"process CPU s", FormatFixed(double(node.process_cpu_ns) / 1e9, 3)});
  fields.AddRow({"waited for a CPU s", FormatFixed(double(node.run_delay_ns) / 1e9, 3)});
  fields.AddRow({"CPU-quota throttled s", FormatFixed(double(node.cpu_throttled_ns) / 1e9, 3)});
  fields.AddRow({"TCP segments retransmitted, less duplicates", std::to_string(node.tcp_retransmitted)});
  fields.AddRow({"TCP segments out of order", std::to_string(node.tcp_out_of_order)});
  fields.AddRow({"TCP retransmissions x timeout s", FormatFixed(double(node.tcp_retransmit_timeout_us) / 1e6, 3)});
  fields.AddRow({"TCP round trip ms (active connections)", FormatFixed(double(node.tcp_round_trip_us) / 1e3, 3)});
  fields.AddRow({"opened TCP: segments retransmitted", std::to_string(node.tcp_opened_retransmitted)});
  fields.AddRow({"opened TCP: segments out of order", std::to_string(node.tcp_opened_out_of_order)});
  fields.AddRow({"opened TCP: retransmissions x timeout s",
                 FormatFixed(double(node.tcp_opened_retransmit_timeout_us) / 1e6, 3)});
  fields.AddRow({"major page faults", std::to_string(node.major_faults)});
  fields.AddRow({"disk", DiskText(node)});
  if (node.disk_state == shm::DiskState::kDevice) {
    fields.AddRow({"disk reads completed", std::to_string(node.disk_reads_completed)});
    fields.AddRow({"disk writes completed", std::to_string(node.disk_writes_completed)});
    fields.AddRow({"disk sectors read", std::to_string(node.disk_sectors_read)});
    fields.AddRow({"disk sectors written", std::to_string(node.disk_sectors_written)});
    fields.AddRow({"disk read ms", std::to_string(node.disk_read_ms)});
    fields.AddRow({"disk write ms", std::to_string(node.disk_write_ms)});
    fields.AddRow({"disk busy ms", std::to_string(node.disk_io_ms)});
    fields.AddRow({"disk weighted ms", std::to_string(node.disk_weighted_io_ms)});
  }
  return out + fields.Render();
}

void WriteIoJson(JsonWriter* json, const shm::Snapshot& s, double lifetime_seconds) {
  json->Key("io");
  json->BeginObject();
  json->Key("lifetime_s");
  if (lifetime_seconds > 0) {
    json->Double(lifetime_seconds);
  } else {
    json->Null();
  }
  json->Key("operations");
  json->BeginArray();
  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      const shm::IoValues& values = s.io.counters[kind][operation];
      if (values.calls == 0) continue;
      json->BeginObject();
      json->Field("kind", FdKindName(static_cast<shm::FdKind>(kind)));
      json->Field("operation", IoOperationName(static_cast<shm::IoOperation>(operation)));
      WriteValues(json, values, s.ns_per_tick, lifetime_seconds);
      json->EndObject();
    }
  }
  json->EndArray();
  json->Key("socket_reads");
  json->BeginObject();
  const char* role_keys[shm::kSocketRoleCount] = {"accepted", "connected"};
  for (uint32_t role = 0; role < shm::kSocketRoleCount; ++role) {
    json->Key(role_keys[role]);
    json->BeginObject();
    WriteValues(json, s.io.socket_reads[role], s.ns_per_tick, lifetime_seconds);
    json->EndObject();
  }
  json->EndObject();
  json->Key("errnos");
  json->BeginArray();
  for (const auto& record : s.io.errnos) {
    json->BeginObject();
    json->Field("kind", FdKindName(record.kind));
    json->Field("operation", IoOperationName(record.operation));
    json->Field("errno", record.error);
    json->Field("name", analyzer::ErrnoName(record.error));
    json->Field("count", record.count);
    json->EndObject();
  }
  json->EndArray();
  json->Field("errno_overflow", s.io.errno_overflow);
  json->Field("untimed_calls", s.io.untimed_calls);
  // Seed 001's metrics over the whole life of the segment.
  analyzer::IoMetrics totals = analyzer::DeriveIoMetrics(shm::Snapshot{}, s);
  json->Key("service_times");
  json->BeginObject();
  for (auto [name, time] : {std::pair{"dread", &totals.dread}, std::pair{"dwrite", &totals.dwrite},
                            std::pair{"dsync", &totals.dsync}, std::pair{"nsread", &totals.nsread},
                            std::pair{"ncread", &totals.ncread}}) {
    json->Key(name);
    json->BeginObject();
    json->Field("calls", time->calls);
    json->Field("total_ms", time->total_ms);
    json->Field("ms_per_call", time->ms_per_call);
    json->EndObject();
  }
  json->EndObject();
  json->Field("socket_bytes_in", totals.socket_bytes_in);
  json->Field("socket_bytes_out", totals.socket_bytes_out);
  json->EndObject();
}

void WriteNodeMetricsJson(JsonWriter* json, const shm::NodeMetricsValues& node) {
  json->Key("node_metrics");
  json->BeginObject();
  json->Field("valid", node.valid);
  json->Field("timestamp_ns", node.timestamp_ns);
  json->Field("interrupts", node.interrupts);
  json->Field("context_switches", node.context_switches);
  json->Field("pages_allocated", node.pages_allocated);
  json->Field("heap_bytes", node.heap_bytes);
  json->Field("process_cpu_ns", node.process_cpu_ns);
  json->Field("run_delay_ns", node.run_delay_ns);
  json->Field("cpu_throttled_ns", node.cpu_throttled_ns);
  json->Field("tcp_retransmitted", node.tcp_retransmitted);
  json->Field("tcp_out_of_order", node.tcp_out_of_order);
  json->Field("tcp_retransmit_timeout_us", node.tcp_retransmit_timeout_us);
  json->Field("tcp_round_trip_us", node.tcp_round_trip_us);
  json->Field("tcp_opened_retransmitted", node.tcp_opened_retransmitted);
  json->Field("tcp_opened_out_of_order", node.tcp_opened_out_of_order);
  json->Field("tcp_opened_retransmit_timeout_us", node.tcp_opened_retransmit_timeout_us);
  json->Field("major_faults", node.major_faults);
  json->Key("disk");
  json->BeginObject();
  json->Field("state", DiskStateKey(node.disk_state));
  json->Field("description", DiskText(node));
  json->Field("name", node.disk_name);
  json->Field("major", node.disk_major);
  json->Field("minor", node.disk_minor);
  json->Field("reads_completed", node.disk_reads_completed);
  json->Field("writes_completed", node.disk_writes_completed);
  json->Field("sectors_read", node.disk_sectors_read);
  json->Field("sectors_written", node.disk_sectors_written);
  json->Field("read_ms", node.disk_read_ms);
  json->Field("write_ms", node.disk_write_ms);
  json->Field("io_ms", node.disk_io_ms);
  json->Field("weighted_io_ms", node.disk_weighted_io_ms);
  json->EndObject();
  json->EndObject();
}

}  // namespace limpwatch::cli
