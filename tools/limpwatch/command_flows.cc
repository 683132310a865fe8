// `limpwatch flows NAME | RECORDINGS... [--json] [--top N]`: the request
// flows a segment holds (or recordings kept), grouped into categories by
// the structure of their call trees (analyzer/flow_categories.h): per
// category its flows, latency mean and coefficient of variation, and the
// functions where its flows spent their own time.
#include <sys/stat.h>

#include <algorithm>
#include <ctime>

#include "args.h"
#include "commands.h"
#include "format.h"
#include "json_writer.h"
#include "limpwatch/analyzer/flow_categories.h"
#include "limpwatch/shm/snapshot.h"
#include "output.h"
#include "recording_scan.h"
#include "table.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kFlowsOptions[] = {
    {"--json", "", false},
    {"--top", "-n", true},
    {"--help", "-h", false},
};

constexpr size_t kFunctionsShown = 3;

struct FlowTotals {
  analyzer::FlowCategories categories;
  std::unordered_map<uint64_t, std::string> names;
  uint64_t lost = 0;
  uint64_t unnamed = 0;
  std::map<std::string, uint64_t> flows_by_server;
};

void AddRecord(const std::string& server, const analyzer::FlowsRecord& record, FlowTotals* totals) {
  totals->lost += record.flows_lost;
  totals->unnamed += record.flows_unnamed;
  auto name_of = [totals](uint64_t hash) {
    auto found = totals->names.find(hash);
    return found != totals->names.end() ? found->second : std::string();
  };
  for (const analyzer::FlowSample& flow : record.flows) {
    totals->categories.Add(analyzer::CategorizeFlow(flow, name_of));
    ++totals->flows_by_server[server];
  }
}

bool IsRegularFile(const std::string& path) {
  struct stat status{};
  return stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

bool ReadSegmentFlows(const std::string& what, FlowTotals* totals, std::string* error) {
  std::optional<std::string> object = shm::ResolveSegment(what, error);
  if (!object) return false;
  std::unique_ptr<shm::SegmentReader> reader = shm::SegmentReader::Open(*object, error);
  if (!reader) return false;
  if (!reader->view().has_flows()) {
    *error = "segment '" + *object + "': no request flows (its process ran with LIMPWATCH_FLOW_SAMPLE=0)";
    return false;
  }
  shm::Snapshot snapshot;
  shm::TakeSnapshot(*reader, &snapshot);
  for (const shm::FunctionRecord& function : snapshot.functions) {
    if (function.name_hash != 0) totals->names.try_emplace(function.name_hash, function.name);
  }
  shm::FlowReader flow_reader;
  analyzer::FlowsRecord record =
      analyzer::CollectFlows(reader->view(), snapshot, &flow_reader, uint64_t(std::time(nullptr)) * 1000);
  std::string server = reader->header().name[0] != '\0' ? reader->header().name : reader->header().program;
  AddRecord(server, record, totals);
  return true;
}

// Names first, then flows: a recording names a function before its flows use it.
bool ReadRecordingFlows(const std::vector<std::string>& paths, FlowTotals* totals, std::string* error) {
  std::vector<std::string> problems;
  for (const std::string& path : paths) {
    auto on_flows = [totals](const std::string& server, const analyzer::FlowsRecord& record) {
      AddRecord(server, record, totals);
    };
    if (!ForEachRecord(path, nullptr, on_flows, &totals->names, &problems, error)) return false;
  }
  for (const std::string& problem : problems) Warn(problem);
  return true;
}

std::vector<std::pair<std::string, double>> TopFunctions(const analyzer::FlowCategory& category) {
  std::vector<std::pair<std::string, double>> functions(category.self_ns.begin(), category.self_ns.end());
  std::sort(functions.begin(), functions.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return functions;
}

void PrintJson(const FlowTotals& totals, const std::vector<const analyzer::FlowCategory*>& shown) {
  JsonWriter out(2);
  out.BeginObject();
  out.Field("flows", totals.categories.flows());
  out.Field("flows_lost", totals.lost);
  out.Field("flows_unnamed", totals.unnamed);
  out.Key("servers");
  out.BeginObject();
  for (const auto& [server, flows] : totals.flows_by_server) out.Field(server, flows);
  out.EndObject();
  out.Field("categories_total", uint64_t(totals.categories.all().size()));
  out.Key("categories");
  out.BeginArray();
  for (const analyzer::FlowCategory* category : shown) {
    out.BeginObject();
    out.Field("category", FormatHex16(category->category));
    out.Field("root", category->root);
    out.Field("structure", category->structure);
    out.Field("display", category->display);
    out.Field("flows", category->count);
    out.Field("mean_ns", category->mean_ns);
    out.Field("cv", category->cv());
    out.Key("self_ns_per_flow");
    out.BeginObject();
    for (const auto& [function, self_ns] : TopFunctions(*category)) out.Field(function, self_ns / double(category->count));
    out.EndObject();
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
  WriteOut(out.str() + "\n");
}

void PrintText(const FlowTotals& totals, const std::vector<const analyzer::FlowCategory*>& shown) {
  std::string head = std::to_string(totals.categories.flows()) + " flows in " +
                     std::to_string(totals.categories.all().size()) + " categories";
  if (totals.flows_by_server.size() > 1) head += " from " + std::to_string(totals.flows_by_server.size()) + " servers";
  if (totals.lost != 0) head += "; " + std::to_string(totals.lost) + " lost (overwritten before they were read)";
  if (totals.unnamed != 0) head += "; " + std::to_string(totals.unnamed) + " left out (a function not named yet)";
  WriteOut(head + "\n");
  if (shown.empty()) return;
  Table table({{"FLOWS", Align::kRight}, {"MEAN", Align::kRight}, {"CV", Align::kRight}, {"SELF TIME PER FLOW"},
               {"STRUCTURE"}});
  for (const analyzer::FlowCategory* category : shown) {
    std::string functions;
    auto top = TopFunctions(*category);
    for (size_t index = 0; index < std::min(kFunctionsShown, top.size()); ++index) {
      if (!functions.empty()) functions += ", ";
      functions += analyzer::ShortFunctionName(top[index].first) + " " +
                   FormatDuration(top[index].second / double(category->count));
    }
    table.AddRow({std::to_string(category->count), FormatDuration(category->mean_ns),
                  category->count > 1 ? FormatFixed(category->cv(), 2) : "-", functions, category->display});
  }
  table.SetMaxWidth(3, 60);
  WriteOut(table.Render());
}

}  // namespace

int RunFlows(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kFlowsOptions, &parsed, &error)) return UsageError("flows", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("flows"));
    return FinishOutput(kExitOk);
  }
  if (parsed.positional.empty()) return UsageError("flows", "expected a segment NAME or RECORDINGS...");
  uint64_t top = 20;
  if (const std::string* value = parsed.Value("--top")) {
    if (!ParseUnsigned(*value, &top) || top == 0) return UsageError("flows", "--top takes a whole number above 0");
  }
  FlowTotals totals;
  bool recordings = IsRegularFile(parsed.positional[0]);
  if (!recordings && parsed.positional.size() != 1) {
    return UsageError("flows", "'" + parsed.positional[0] + "' is no file: expected one segment NAME or RECORDINGS...");
  }
  bool read = recordings ? ReadRecordingFlows(parsed.positional, &totals, &error)
                         : ReadSegmentFlows(parsed.positional[0], &totals, &error);
  if (!read) return Fail(kExitFailure, error);
  std::vector<const analyzer::FlowCategory*> shown = totals.categories.ByCount();
  if (shown.size() > top) shown.resize(top);
  if (parsed.Has("--json")) {
    PrintJson(totals, shown);
  } else {
    PrintText(totals, shown);
  }
  return FinishOutput(kExitOk);
}

}  // namespace limpwatch::cli
