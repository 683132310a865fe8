#include "recording_scan.h"

#include <algorithm>

#include "format.h"
#include "limpwatch/analyzer/flow_categories.h"
#include "limpwatch/analyzer/trace_file.h"

namespace limpwatch::cli {

bool ForEachTick(const std::string& path, const std::function<void(const std::string&, const analyzer::TickRecord&)>& on_tick,
                 std::unordered_map<uint64_t, std::string>* names, std::vector<std::string>* problems,
                 std::string* error) {
  return ForEachRecord(path, on_tick, nullptr, names, problems, error);
}

bool ForEachRecord(const std::string& path,
                   const std::function<void(const std::string&, const analyzer::TickRecord&)>& on_tick,
                   const FlowsVisitor& on_flows, std::unordered_map<uint64_t, std::string>* names,
                   std::vector<std::string>* problems, std::string* error) {
  std::unique_ptr<analyzer::TraceReader> reader = analyzer::TraceReader::Open(path, error);
  if (!reader) return false;
  analyzer::TickRecord tick;
  std::vector<analyzer::FunctionName> named;
  analyzer::FlowsRecord flows;
  uint64_t ticks = 0;
  for (;;) {
    analyzer::TraceReader::Item item = reader->Next(&tick, &named, on_flows ? &flows : nullptr);
    if (item == analyzer::TraceReader::Item::kEnd) break;
    if (item == analyzer::TraceReader::Item::kTick) {
      ++ticks;
      if (on_tick) on_tick(reader->node(), tick);
    } else if (item == analyzer::TraceReader::Item::kFlows) {
      on_flows(reader->node(), flows);
    } else if (names != nullptr) {
      for (const analyzer::FunctionName& name : named) {
        if (name.name_hash != 0 && !name.name.empty()) names->try_emplace(name.name_hash, name.name);
      }
    }
  }
  problems->insert(problems->end(), reader->problems().begin(), reader->problems().end());
  if (ticks == 0) problems->push_back(path + ": no tick records");
  return true;
}

bool ScanRecordings(const std::vector<std::string>& paths, size_t top_per_tick, RecordingScan* scan,
                    std::string* error) {
  std::vector<const analyzer::FunctionTick*> by_self;
  auto on_tick = [&](const std::string& server, const analyzer::TickRecord& tick) {
    ServerScan& totals = scan->servers[server];
    ++totals.ticks;
    ++scan->ticks;
    by_self.clear();
    for (const analyzer::FunctionTick& function : tick.functions) {
      FunctionTotals& entry = totals.functions[function.name_hash];
      entry.self_ms += function.self_ms;
      entry.samples += function.samples;
      totals.samples += function.samples;
      if (function.self_ms > 0) by_self.push_back(&function);
    }
    size_t top = std::min(top_per_tick, by_self.size());
    std::partial_sort(by_self.begin(), by_self.begin() + long(top), by_self.end(),
                      [](const analyzer::FunctionTick* a, const analyzer::FunctionTick* b) {
                        return a->self_ms > b->self_ms;
                      });
    for (size_t index = 0; index < top; ++index) totals.functions[by_self[index]->name_hash].in_a_tick_top = true;
  };
  std::vector<uint64_t> stack;
  auto on_flows = [&](const std::string& server, const analyzer::FlowsRecord& record) {
    ServerScan& totals = scan->servers[server];
    for (const analyzer::FlowSample& flow : record.flows) {
      ++totals.flows;
      // Names are not needed here: the stacks are kept by name hash.
      analyzer::CategorizedFlow timed = analyzer::CategorizeFlow(flow, [](uint64_t) { return std::string(); });
      for (const analyzer::FlowCallTimes& call : timed.calls) {
        stack.resize(call.depth);
        stack.push_back(call.name_hash);
        if (call.self_ns > 0) totals.flow_stack_self_ns[stack] += call.self_ns;
      }
    }
  };
  for (const std::string& path : paths) {
    if (!ForEachRecord(path, on_tick, on_flows, &scan->names, &scan->problems, error)) return false;
  }
  return true;
}

std::string FunctionLabel(const std::unordered_map<uint64_t, std::string>& names, uint64_t name_hash) {
  auto found = names.find(name_hash);
  return found != names.end() ? found->second : "0x" + FormatHex16(name_hash);
}

}  // namespace limpwatch::cli
