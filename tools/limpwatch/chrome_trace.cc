#include "chrome_trace.h"

#include <algorithm>
#include <functional>
#include <set>

#include "format.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/shm/name_hash.h"

namespace limpwatch::cli {
namespace {

// What the server's profile says of its resources beyond its own functions
// (tick_record.h): one counter, so that a starved CPU or a lossy link shows
// beside the I/O times.
constexpr const char* kResourceFeatures[] = {analyzer::kRunqueueWaitName, analyzer::kLostPacketsName,
                                             analyzer::kRoundTripName, analyzer::kFileSyncName,
                                             analyzer::kMajorFaultsName};

bool IsResourceFeature(uint64_t name_hash) {
  for (const char* name : kResourceFeatures) {
    if (shm::FunctionNameHash(name) == name_hash) return true;
  }
  return false;
}

double SelfMs(const analyzer::TickRecord& tick, uint64_t name_hash) {
  // A tick's functions are sorted by hash (tick_record.h).
  auto found = std::lower_bound(tick.functions.begin(), tick.functions.end(), name_hash,
                                [](const analyzer::FunctionTick& function, uint64_t hash) {
                                  return function.name_hash < hash;
                                });
  return found != tick.functions.end() && found->name_hash == name_hash ? found->self_ms : 0.0;
}

// Large enough that the sink sees few writes, small enough to bound memory.
constexpr size_t kFlushBytes = 1 << 16;

}  // namespace

std::vector<TrackedFunction> ChooseTrackedFunctions(const ServerScan& server,
                                                    const std::unordered_map<uint64_t, std::string>& names) {
  std::vector<std::pair<double, uint64_t>> candidates;  // (self ms over the recording, hash)
  for (const auto& [hash, totals] : server.functions) {
    if (totals.in_a_tick_top && !IsResourceFeature(hash)) candidates.emplace_back(totals.self_ms, hash);
  }
  // Ties broken by hash so that the same recordings always give the same tracks.
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (candidates.size() > kMaxFunctionTracks) candidates.resize(kMaxFunctionTracks);
  std::vector<TrackedFunction> tracked;
  std::set<std::string> labels;
  for (const auto& [self_ms, hash] : candidates) {
    std::string label = FunctionLabel(names, hash);
    // Two hashes of one name (names from different images) would be one JSON key twice.
    if (!labels.insert(label).second) label += " (0x" + FormatHex16(hash) + ")";
    labels.insert(label);
    tracked.push_back({hash, label});
  }
  return tracked;
}

ChromeTraceWriter::ChromeTraceWriter(ExportSink* sink) : sink_(sink) {}

void ChromeTraceWriter::BeginDocument() { pending_ += "{\"traceEvents\":[\n"; }

void ChromeTraceWriter::Event(const JsonWriter& event) {
  if (!first_event_) pending_ += ",\n";
  first_event_ = false;
  pending_ += event.str();
  FlushIfLarge();
}

void ChromeTraceWriter::FlushIfLarge() {
  if (pending_.size() < kFlushBytes) return;
  if (ok_) ok_ = sink_->Write(pending_);
  pending_.clear();
}

void ChromeTraceWriter::ProcessName(uint32_t pid, const std::string& server) {
  JsonWriter event(0);
  event.BeginObject();
  event.Field("name", "process_name");
  event.Field("ph", "M");
  event.Field("pid", pid);
  event.Key("args");
  event.BeginObject();
  event.Field("name", server);
  event.EndObject();
  event.EndObject();
  Event(event);
}

void ChromeTraceWriter::Counter(uint32_t pid, uint64_t ts_us, const char* name,
                                const std::function<void(JsonWriter*)>& args) {
  JsonWriter event(0);
  event.BeginObject();
  event.Field("name", name);
  event.Field("ph", "C");
  event.Field("pid", pid);
  event.Field("ts", ts_us);
  event.Key("args");
  event.BeginObject();
  args(&event);
  event.EndObject();
  event.EndObject();
  Event(event);
}

void ChromeTraceWriter::TickCounters(uint32_t pid, const analyzer::TickRecord& tick,
                                     const std::vector<TrackedFunction>& functions) {
  // The tick's end: where the online analyzer, and the alarms, place it.
  const uint64_t ts_us = tick.unix_ms * 1000;
  const analyzer::IoTick& io = tick.io;
  Counter(pid, ts_us, "io service ms", [&](JsonWriter* args) {
    args->Field("dread", io.dread_ms);
    args->Field("dwrite", io.dwrite_ms);
    args->Field("nsread", io.nsread_ms);
    args->Field("ncread", io.ncread_ms);
  });
  Counter(pid, ts_us, "io calls", [&](JsonWriter* args) {
    args->Field("file reads", io.file_reads);
    args->Field("file writes", io.file_writes);
    args->Field("socket reads", io.socket_reads);
  });
  Counter(pid, ts_us, "request bytes", [&](JsonWriter* args) { args->Field("bytes", io.request_bytes); });
  Counter(pid, ts_us, "io errors", [&](JsonWriter* args) { args->Field("errors", io.errors); });
  const analyzer::NodeTick& node = tick.node_stats;
  // Statistics a tick did not gather would draw as a drop to zero.
  if (node.valid) {
    Counter(pid, ts_us, "disk ms", [&](JsonWriter* args) {
      args->Field("await", node.disk_await_ms);
      args->Field("svctm", node.disk_svctm_ms);
    });
    Counter(pid, ts_us, "disk utilisation", [&](JsonWriter* args) { args->Field("utilisation", node.disk_utilisation); });
    Counter(pid, ts_us, "disk requests", [&](JsonWriter* args) {
      args->Field("requests", node.disk_requests);
      args->Field("size kb", node.disk_iosize_kb);
    });
    Counter(pid, ts_us, "cpu ms", [&](JsonWriter* args) { args->Field("cpu", node.cpu_ms); });
    Counter(pid, ts_us, "node", [&](JsonWriter* args) {
      args->Field("interrupts", node.interrupts);
      args->Field("pages allocated", node.pages_allocated);
      args->Field("heap growth bytes", node.heap_growth_bytes);
    });
  }
  Counter(pid, ts_us, "resource features ms", [&](JsonWriter* args) {
    for (const char* name : kResourceFeatures) args->Field(name, SelfMs(tick, shm::FunctionNameHash(name)));
  });
  if (!functions.empty()) {
    Counter(pid, ts_us, "function self ms", [&](JsonWriter* args) {
      for (const TrackedFunction& function : functions) args->Field(function.label, SelfMs(tick, function.name_hash));
    });
  }
}

void ChromeTraceWriter::FlowSlices(uint32_t pid, const analyzer::FlowSample& flow,
                                   const std::unordered_map<uint64_t, std::string>& names) {
  for (const analyzer::FlowCallRecord& call : flow.calls) {
    JsonWriter event(0);
    event.BeginObject();
    event.Field("name", FunctionLabel(names, call.name_hash));
    event.Field("cat", "flow");
    event.Field("ph", "X");
    event.Field("pid", pid);
    event.Field("tid", flow.tid);
    // The format's unit is the microsecond; a double keeps today's to a quarter of one.
    event.Field("ts", double(flow.begin_unix_ns + call.start_ns) / 1000.0);
    event.Field("dur", double(call.duration_ns) / 1000.0);
    if (!call.exited) {
      event.Key("args");
      event.BeginObject();
      event.Field("cut", true);
      event.EndObject();
    }
    event.EndObject();
    Event(event);
  }
}

void ChromeTraceWriter::AlarmInstant(uint32_t pid, const analyzer::Alarm& alarm) {
  JsonWriter event(0);
  event.BeginObject();
  event.Field("name", std::string("alarm: ") + alarm.server + " " + analyzer::ResourceName(alarm.resource));
  event.Field("ph", "i");
  event.Field("s", pid != 0 ? "p" : "g");
  event.Field("pid", pid);
  event.Field("tid", 0);
  event.Field("ts", alarm.time_unix_ms * 1000);
  event.Key("args");
  event.BeginObject();
  event.Field("kind", analyzer::AlarmKindName(alarm.kind));
  event.Field("server", alarm.server);
  event.Field("reporter", alarm.reporter);
  event.Field("resource", analyzer::ResourceName(alarm.resource));
  std::string metrics;
  for (const std::string& metric : alarm.metrics) metrics += (metrics.empty() ? "" : ",") + metric;
  event.Field("metrics", metrics);
  event.Field("score", alarm.score);
  event.Field("threshold", alarm.threshold);
  event.Field("window", alarm.window);
  event.Key("functions");
  event.BeginArray();
  for (const analyzer::RootCauseFunction& function : alarm.top_functions) event.String(function.name);
  event.EndArray();
  if (!alarm.reason.empty()) event.Field("reason", alarm.reason);
  event.EndObject();
  event.EndObject();
  Event(event);
}

bool ChromeTraceWriter::EndDocument() {
  pending_ += "\n],\"displayTimeUnit\":\"ms\"}\n";
  if (ok_) ok_ = sink_->Write(pending_);
  pending_.clear();
  return ok_;
}

}  // namespace limpwatch::cli
