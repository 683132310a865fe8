// The request flows of recordings, as the commands read them: `compare`
// per request category (Spectroscope), `diagnose --rpca` per category
// (CloudDiag), `export` as slices and folded stacks, `flows`. Recordings of
// a synthetic cluster, ticks and flows, written with the recording writer
// and read by the real binary.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/synthetic_cluster.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"
#include "peer/temp_dir.h"
#include "support/cli_capture.h"
#include "support/strict_json.h"

namespace limpwatch {
namespace {

using analyzer::FlowSample;
using analyzer::FlowsRecord;
using analyzer::TickRecord;
using analyzer::testing::TempDir;
using testing::CliRun;
using testing::Json;
using testing::ParseJson;

uint64_t Hash(const std::string& name) { return shm::FunctionNameHash(name); }

// A request type: its root and its children, each with a typical time.
struct Call {
  std::string name;
  double ns;
};
struct RequestType {
  std::string root;
  double root_ns;
  std::vector<Call> children;
};

std::vector<RequestType> Workload() {
  return {{"handle_create", 4000, {{"meta_lookup", 20000}, {"meta_insert", 60000}}},
          {"handle_read", 3000, {{"storage_read", 80000}, {"reply_send", 15000}}},
          {"handle_write", 3000, {{"storage_write", 90000}, {"meta_update", 25000}, {"reply_send", 15000}}}};
}

// What a server does differently: a child slower (on some of its flows),
// or a child added to a request type.
struct Change {
  std::string request;
  std::string child;
  double factor = 1;
  double share = 1;        // of the request's flows
  bool added = false;      // `child` is a new call of the request
};

FlowSample MakeFlow(const RequestType& type, uint64_t begin_ns, std::mt19937_64& random,
                    const std::vector<Change>& changes) {
  std::lognormal_distribution<double> noise(0.0, 0.15);
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<Call> children = type.children;
  for (const Change& change : changes) {
    if (change.request == type.root && change.added) children.push_back({change.child, 30000});
  }
  FlowSample flow;
  flow.tid = 100;
  flow.begin_unix_ns = begin_ns;
  uint64_t cursor = uint64_t(type.root_ns * noise(random) / 2);
  std::vector<analyzer::FlowCallRecord> calls;
  for (const Call& child : children) {
    double ns = child.ns * noise(random);
    for (const Change& change : changes) {
      if (change.request == type.root && change.child == child.name && !change.added && coin(random) < change.share) {
        ns *= change.factor;
      }
    }
    calls.push_back({Hash(child.name), 1, cursor, uint64_t(ns), true});
    cursor += uint64_t(ns) + 500;
  }
  flow.calls.push_back({Hash(type.root), 0, 0, cursor + uint64_t(type.root_ns * noise(random) / 2), true});
  flow.calls.insert(flow.calls.end(), calls.begin(), calls.end());
  return flow;
}

struct ServerChanges {
  std::string server;  // empty: every server
  std::vector<Change> changes;
};

// Four servers, `ticks` seconds of ticks from the synthetic cluster and, per
// tick, 6 flows of each request type per server.
std::vector<std::string> WriteRun(const TempDir& directory, const std::string& prefix, uint32_t seed,
                                  uint64_t offset_s, const ServerChanges& changed = {}, int ticks = 60) {
  testing::SyntheticCluster synthetic;
  synthetic.servers = 4;
  synthetic.ticks = ticks;
  synthetic.seed = seed;
  synthetic.first_tick += offset_s;
  auto cluster = testing::GenerateCluster(synthetic);
  std::vector<analyzer::FunctionName> names;
  for (const RequestType& type : Workload()) {
    names.push_back({Hash(type.root), type.root});
    for (const Call& child : type.children) names.push_back({Hash(child.name), child.name});
  }
  names.push_back({Hash("journal_flush"), "journal_flush"});
  std::mt19937_64 random(seed);
  std::vector<std::string> paths;
  for (const auto& [server, server_ticks] : cluster) {
    std::string path = directory.File(prefix + server + ".lwtrace");
    std::string error;
    auto writer = analyzer::TraceWriter::Open(path, server, 1000, &error);
    EXPECT_TRUE(writer) << error;
    writer->Append(analyzer::TraceRecordType::kNames, analyzer::EncodeNamesRecord(names));
    std::vector<Change> changes;
    if (changed.server.empty() || changed.server == server) changes = changed.changes;
    for (const TickRecord& tick : server_ticks) {
      writer->Append(analyzer::TraceRecordType::kTick, analyzer::EncodeTickRecord(tick));
      FlowsRecord record;
      record.unix_ms = tick.unix_ms;
      for (int index = 0; index < 6; ++index) {
        for (const RequestType& type : Workload()) {
          uint64_t begin_ns = (tick.unix_ms - 1000) * 1000000 + uint64_t(index) * 150000000;
          record.flows.push_back(MakeFlow(type, begin_ns, random, changes));
        }
      }
      writer->Append(analyzer::TraceRecordType::kFlows, analyzer::EncodeFlowsRecord(record));
    }
    EXPECT_TRUE(writer->Flush());
    paths.push_back(path);
  }
  return paths;
}

std::string Join(const std::vector<std::string>& paths) {
  std::string joined;
  for (const std::string& path : paths) joined += " " + path;
  return joined;
}

CliRun Cli(const std::string& arguments, const TempDir& directory) {
  return testing::RunCaptured(std::string(LIMPWATCH_CLI_PATH) + " " + arguments, directory.File("stdout"),
                              directory.File("stderr"));
}

Json CliJson(const std::string& arguments, const TempDir& directory) {
  CliRun run = Cli(arguments, directory);
  EXPECT_EQ(run.status, 0) << run.err;
  Json json;
  EXPECT_TRUE(ParseJson(run.out, &json)) << run.out;
  return json;
}

TEST(FlowAnalysisTest, CompareRanksTheCategoryOfASlowerRequestTypeFirst) {
  TempDir directory;
  std::string before = Join(WriteRun(directory, "before-", 1, 0));
  // A regression: every server's creates spend three times as long inserting.
  ServerChanges regression{"", {{"handle_create", "meta_insert", 3.0}}};
  std::string after = Join(WriteRun(directory, "after-", 2, 3600, regression));
  Json json = CliJson("compare --json" + before + " --" + after, directory);
  const Json& categories = json["categories"];
  EXPECT_EQ(categories["flows_before"].AsUint(), 4u * 60 * 18);
  ASSERT_GE(categories["mutations"].items.size(), 1u) << "no category mutation";
  const Json& first = categories["mutations"][0];
  EXPECT_EQ(first["display"].AsString(), "handle_create(meta_insert,meta_lookup)");
  EXPECT_EQ(first["kind"].AsString(), "response_time");
  EXPECT_LT(first["p_value"].AsDouble(), 1e-10);
  // About 84 us -> 204 us a create, 24 creates a second.
  EXPECT_GT(first["contribution_ms_per_s"].AsDouble(), 2.0);

  CliRun text = Cli("compare" + before + " --" + after, directory);
  ASSERT_EQ(text.status, 0) << text.err;
  std::istringstream lines(text.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_NE(header.find("REQUEST CATEGORY"), std::string::npos) << text.out;
  EXPECT_NE(row.find("handle_create(meta_insert,meta_lookup)"), std::string::npos) << text.out;
}

TEST(FlowAnalysisTest, CompareOfTwoHealthyRunsFindsNoCategoryMutation) {
  TempDir directory;
  std::string before = Join(WriteRun(directory, "before-", 1, 0));
  std::string after = Join(WriteRun(directory, "after-", 2, 3600));
  Json json = CliJson("compare --json" + before + " --" + after, directory);
  EXPECT_EQ(json["categories"]["mutation_count"].AsUint(), 0u) << json["categories"]["mutations"][0]["display"].AsString();
}

TEST(FlowAnalysisTest, ANewCategoryNamesTheOneItCameFromAsPrecursor) {
  TempDir directory;
  std::string before = Join(WriteRun(directory, "before-", 1, 0));
  ServerChanges upgrade{"", {{"handle_create", "journal_flush", 1, 1, true}}};
  std::string after = Join(WriteRun(directory, "after-", 2, 3600, upgrade));
  Json json = CliJson("compare --json" + before + " --" + after, directory);
  const Json* added = nullptr;
  for (const Json& mutation : json["categories"]["mutations"].items) {
    if (mutation["kind"].AsString() == "new") added = &mutation;
  }
  ASSERT_NE(added, nullptr) << "no new category";
  EXPECT_EQ((*added)["display"].AsString(), "handle_create(journal_flush,meta_insert,meta_lookup)");
  ASSERT_GE((*added)["precursors"].items.size(), 1u);
  const Json& precursor = (*added)["precursors"][0];
  EXPECT_EQ(precursor["display"].AsString(), "handle_create(meta_insert,meta_lookup)");
  EXPECT_NEAR(precursor["similarity"].AsDouble(), 0.75, 1e-9);  // 3 of the 4 calls
  EXPECT_NEAR(precursor["share_before"].AsDouble(), 1.0 / 3, 1e-9);
  EXPECT_EQ(precursor["share_after"].AsDouble(), 0.0);
}

TEST(FlowAnalysisTest, CloudDiagPerCategoryNamesTheServerWhereAFunctionIsSlow) {
  TempDir directory;
  // server2's reads spend 8 times as long in storage_read in half its flows.
  ServerChanges limping{"server2", {{"handle_read", "storage_read", 8.0, 0.5}}};
  std::string files = Join(WriteRun(directory, "run-", 3, 0, limping, 30));
  CliRun run = Cli("diagnose --rpca --json" + files, directory);
  ASSERT_EQ(run.status, 0) << run.err;
  bool named = false;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    Json alarm;
    ASSERT_TRUE(ParseJson(line, &alarm)) << line;
    if (alarm["metrics"][0].AsString().rfind("flows ", 0) != 0) continue;
    EXPECT_EQ(alarm["server"].AsString(), "server2") << line;
    if (alarm["top_functions"][0]["name"].AsString() == "storage_read") named = true;
  }
  EXPECT_TRUE(named) << run.out;

  CliRun healthy = Cli("diagnose --rpca" + Join(WriteRun(directory, "healthy-", 4, 0, {}, 30)), directory);
  ASSERT_EQ(healthy.status, 0) << healthy.err;
  EXPECT_EQ(healthy.out.find(" -> server"), std::string::npos) << healthy.out;
  EXPECT_NE(healthy.out.find("request categories (CloudDiag per category): 2160 flows"), std::string::npos)
      << healthy.out;
}

TEST(FlowAnalysisTest, ExportDrawsEachFlowsCallsAsSlicesAndFoldsTheirSelfTime) {
  TempDir directory;
  std::string files = Join(WriteRun(directory, "run-", 5, 0, {}, 10));
  Json trace = CliJson("export --no-alarms" + files, directory);
  size_t slices = 0;
  for (const Json& event : trace["traceEvents"].items) {
    if (event["ph"].AsString() != "X") continue;
    ++slices;
    EXPECT_EQ(event["cat"].AsString(), "flow");
    EXPECT_EQ(event["tid"].AsUint(), 100u);
    EXPECT_GE(event["dur"].AsDouble(), 0.0);
  }
  // 4 servers x 10 ticks x 6 flows of each type: 3, 3 and 4 calls.
  EXPECT_EQ(slices, 4u * 10 * 6 * (3 + 3 + 4));

  CliRun folded = Cli("export --format folded-flows" + files, directory);
  ASSERT_EQ(folded.status, 0) << folded.err;
  std::map<std::string, uint64_t> stacks;
  std::istringstream lines(folded.out);
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.rfind(' ');
    stacks[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  // Every server's three request types, their roots and children.
  EXPECT_EQ(stacks.size(), 4u * (3 + 7));
  // storage_read's own time: about 80 us (lognormal, mean e^(s^2/2) of it)
  // in each of a server's 60 reads.
  uint64_t reads = stacks.at("server0;handle_read;storage_read");
  EXPECT_NEAR(double(reads), 60 * 80.0 * std::exp(0.15 * 0.15 / 2), 60 * 80.0 * 0.1);

  Json listed = CliJson("flows --json" + files, directory);
  EXPECT_EQ(listed["flows"].AsUint(), 4u * 10 * 18);
  EXPECT_EQ(listed["categories_total"].AsUint(), 3u);
  EXPECT_EQ(listed["categories"][0]["flows"].AsUint(), 240u);
}

}  // namespace
}  // namespace limpwatch
