// Recordings as Chrome trace-event JSON, the format Perfetto's UI and
// chrome://tracing open: {"traceEvents":[...],"displayTimeUnit":"ms"}, one
// event a line, written as it is produced.
//
// Each server is a process (pid 1, 2, ... in the order of their names)
// named by a process_name metadata event. Each of its ticks gives counter
// events ("ph":"C") at the tick's end, each arg a track: its I/O service
// times, calls, bytes and errors, its node's disk and CPU statistics, the
// resource features limpwatch adds to its profile ([waiting for a CPU],
// ...) and the self time of its tracked functions. Alarms are instant
// events ("ph":"i") on the indicted server's process. Request flows are
// slices ("ph":"X") on their thread (tid), nested as the calls were.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_CHROME_TRACE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_CHROME_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "export_sink.h"
#include "json_writer.h"
#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/flow_record.h"
#include "limpwatch/analyzer/tick_record.h"
#include "recording_scan.h"

namespace limpwatch::cli {

// A function given a counter track of its self time.
struct TrackedFunction {
  uint64_t name_hash = 0;
  std::string label;  // unique within its server
};

// Which of a server's functions get a track. A track per function a tick
// ever ran would be thousands in a large server, more than a viewer can
// show, and most of them flat; a track per tick's top functions would come
// and go. So: the functions that were among the `kTopFunctionsPerTick` with
// the most self time of at least one tick, at most `kMaxFunctionTracks` of
// them, the most self time over the recording first, each with a value at
// every tick (0 when it did not run), so a track never holds a stale value.
// The resource features are left out: they have a counter of their own.
inline constexpr size_t kTopFunctionsPerTick = 5;
inline constexpr size_t kMaxFunctionTracks = 16;
std::vector<TrackedFunction> ChooseTrackedFunctions(const ServerScan& server,
                                                    const std::unordered_map<uint64_t, std::string>& names);

class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(ExportSink* sink);

  void BeginDocument();
  void ProcessName(uint32_t pid, const std::string& server);
  void TickCounters(uint32_t pid, const analyzer::TickRecord& tick, const std::vector<TrackedFunction>& functions);
  // A request flow as nested complete events ("ph":"X") on its thread; a
  // call the flow's cut left without its exit has args.cut true.
  void FlowSlices(uint32_t pid, const analyzer::FlowSample& flow,
                  const std::unordered_map<uint64_t, std::string>& names);
  // pid 0: a server without recordings, shown as a global instant event.
  void AlarmInstant(uint32_t pid, const analyzer::Alarm& alarm);
  // Ends the document and hands what is left to the sink; false when the
  // sink failed at some point.
  bool EndDocument();

  // False once the sink has failed: nothing more needs producing.
  bool ok() const { return ok_; }

 private:
  void Counter(uint32_t pid, uint64_t ts_us, const char* name, const std::function<void(JsonWriter*)>& args);
  void Event(const JsonWriter& event);
  void FlushIfLarge();

  ExportSink* sink_;
  std::string pending_;  // events not yet handed to the sink
  bool first_event_ = true;
  bool ok_ = true;
};

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_CHROME_TRACE_H_
