// Request flows: the runtime records one in N requests' whole traced call
// trees into a per-thread ring in the segment (runtime/src/flow_recorder.h),
// and a reader gets them back whole (shm/flows.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "limpwatch/analyzer/flow_categories.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/flows.h"
#include "limpwatch/shm/name_hash.h"
#include "limpwatch/shm/segment.h"
#include "support/selection_run.h"
#include "support/traced_run.h"

namespace limpwatch::testing {
namespace {

struct FlowRun {
  std::vector<shm::RecordedFlow> flows;
  shm::FlowReadTotals totals;
  std::map<uint32_t, std::string> names;  // function id -> name
  uint64_t published = 0;                 // over every ring
  uint64_t cut = 0;
  bool has_flows = false;
  shm::FlowTotals snapshot_totals;  // what a snapshot (and `dump`) says of the rings
};

// Runs `flows mode count` with `environment` and reads every flow it left.
FlowRun RunFlows(const std::string& mode, int count, std::vector<std::string> environment) {
  FlowRun result;
  std::string name = UniqueSegmentName("flows");
  SegmentCleanup cleanup(name);
  environment.push_back("LIMPWATCH_NAME=" + name);
  environment.push_back("LIMPWATCH_KEEP=1");
  ProgramRun run = RunProgram(TestProgram("flows"), {mode, std::to_string(count)}, environment);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  shm::Snapshot snapshot = ReadSegment(name, run.pid);
  for (const auto& function : snapshot.functions) result.names[function.id] = function.name;
  result.snapshot_totals = snapshot.flows;
  std::string error;
  auto reader = shm::SegmentReader::Open(shm::SegmentObjectName(name, run.pid), &error);
  EXPECT_TRUE(reader) << error;
  if (!reader) return result;
  const shm::SegmentView& view = reader->view();
  result.has_flows = view.has_flows();
  if (!view.has_flows()) return result;
  for (uint32_t slot = 0; slot < view.header()->max_threads; ++slot) {
    result.published += view.flow_ring(slot)->flows_published.load();
    result.cut += view.flow_ring(slot)->flows_cut.load();
  }
  shm::FlowReader reader_of_flows;
  result.flows = reader_of_flows.ReadNew(view);
  result.totals = reader_of_flows.totals();
  return result;
}

std::string RootName(const FlowRun& run, const shm::RecordedFlow& flow) { return run.names.at(flow.calls[0].function); }

std::vector<std::string> ChildNames(const FlowRun& run, const shm::RecordedFlow& flow) {
  std::vector<std::string> names;
  for (const shm::FlowCall& call : flow.calls) {
    if (call.depth == 1) names.push_back(run.names.at(call.function));
  }
  return names;
}

TEST(FlowsTest, EachSampledRequestIsRecordedWholeWithItsCallTree) {
  ManifestFile manifest("request handle_request\n");
  FlowRun run = RunFlows("requests", 20, {"LIMPWATCH_SELECT=" + manifest.path(), "LIMPWATCH_FLOW_SAMPLE=1"});
  ASSERT_TRUE(run.has_flows);
  ASSERT_EQ(run.flows.size(), 20u);
  EXPECT_TRUE(run.snapshot_totals.present);
  EXPECT_EQ(run.snapshot_totals.published, 20u);
  EXPECT_EQ(run.snapshot_totals.sample_every, 1u);
  EXPECT_EQ(run.snapshot_totals.events_per_thread, shm::kDefaultFlowEventsPerThread);
  EXPECT_EQ(run.totals.flows_lost, 0u);
  EXPECT_EQ(run.totals.flows_malformed, 0u);
  uint64_t sequence = 0;
  for (const shm::RecordedFlow& flow : run.flows) {
    EXPECT_EQ(flow.sequence, ++sequence);
    EXPECT_FALSE(flow.cut);
    ASSERT_FALSE(flow.calls.empty());
    EXPECT_EQ(RootName(run, flow), "handle_request");
    std::vector<std::string> expected = {"parse_header", "lookup_handle"};
    if (sequence % 2 == 0) expected.push_back("store_block");  // the odd requests: 1, 3, ...
    EXPECT_EQ(ChildNames(run, flow), expected) << "flow " << flow.sequence;
    for (const shm::FlowCall& call : flow.calls) {
      EXPECT_TRUE(call.exited);
      EXPECT_LE(flow.begin_ticks, call.enter_ticks);
      EXPECT_LE(call.enter_ticks, call.exit_ticks);
      EXPECT_LE(call.exit_ticks, flow.end_ticks);
    }
    EXPECT_EQ(flow.calls[0].enter_ticks, flow.begin_ticks);
    EXPECT_EQ(flow.calls[0].exit_ticks, flow.end_ticks);
  }
}

TEST(FlowsTest, OneInNRequestsIsSampled) {
  ManifestFile manifest("request handle_request\n");
  FlowRun run = RunFlows("requests", 40, {"LIMPWATCH_SELECT=" + manifest.path(), "LIMPWATCH_FLOW_SAMPLE=4"});
  ASSERT_TRUE(run.has_flows);
  // Whatever the thread's first phase (1..4), 40 root calls hold 10 sampled ones.
  EXPECT_EQ(run.flows.size(), 10u);
  for (const shm::RecordedFlow& flow : run.flows) EXPECT_EQ(RootName(run, flow), "handle_request");
}

TEST(FlowsTest, WithoutMarkedRequestsEachThreadsOutermostCallIsARoot) {
  FlowRun run = RunFlows("threads", 5, {"LIMPWATCH_FLOW_SAMPLE=1"});
  ASSERT_TRUE(run.has_flows);
  std::multiset<std::string> roots;
  for (const shm::RecordedFlow& flow : run.flows) roots.insert(RootName(run, flow));
  EXPECT_EQ(roots.count("thread_request"), 5u);
  EXPECT_EQ(roots.count("main"), 1u);
  EXPECT_EQ(roots.count("handle_request"), 0u);  // never outermost on its thread
  for (const shm::RecordedFlow& flow : run.flows) {
    if (RootName(run, flow) == "thread_request") {
      EXPECT_EQ(flow.calls.size(), 4u);  // thread_request, handle_request, parse_header, lookup_handle
      EXPECT_NE(flow.tid, 0u);
    }
  }
}

TEST(FlowsTest, ARingThatWrapsLosesOnlyWholeFlowsAndCountsThem) {
  ManifestFile manifest("request handle_request\n");
  // 64 events a ring: whole requests take 8 or 10 events, so a few of the
  // last ones fit and the others were overwritten.
  FlowRun run = RunFlows("requests", 100, {"LIMPWATCH_SELECT=" + manifest.path(), "LIMPWATCH_FLOW_SAMPLE=1",
                                           "LIMPWATCH_FLOW_EVENTS=64"});
  ASSERT_TRUE(run.has_flows);
  EXPECT_EQ(run.published, 100u);
  ASSERT_GE(run.flows.size(), 3u);
  EXPECT_LE(run.flows.size(), 8u);
  EXPECT_EQ(run.totals.flows_lost + run.flows.size(), 100u);
  EXPECT_EQ(run.totals.flows_malformed, 0u);
  // The newest ones, consecutive, each whole.
  EXPECT_EQ(run.flows.back().sequence, 100u);
  for (size_t index = 1; index < run.flows.size(); ++index) {
    EXPECT_EQ(run.flows[index].sequence, run.flows[index - 1].sequence + 1);
  }
  for (const shm::RecordedFlow& flow : run.flows) {
    EXPECT_EQ(RootName(run, flow), "handle_request");
    size_t expected_children = flow.sequence % 2 == 0 ? 3 : 2;
    EXPECT_EQ(ChildNames(run, flow).size(), expected_children) << "flow " << flow.sequence;
  }
}

TEST(FlowsTest, AFlowLongerThanItsBoundIsCutAndMarkedWithoutBlocking) {
  FlowRun run = RunFlows("wide", 200, {"LIMPWATCH_FLOW_SAMPLE=1", "LIMPWATCH_FLOW_EVENTS=64"});
  ASSERT_TRUE(run.has_flows);
  EXPECT_EQ(run.cut, 1u);  // main's flow, cut at 32 events
  EXPECT_EQ(run.snapshot_totals.cut, 1u);
  ASSERT_EQ(run.flows.size(), 1u);
  const shm::RecordedFlow& flow = run.flows[0];
  EXPECT_TRUE(flow.cut);
  EXPECT_EQ(RootName(run, flow), "main");
  EXPECT_LE(flow.calls.size(), 32u);
  EXPECT_GE(flow.calls.size(), 10u);
  // The root's exit was not recorded: it ends with the flow.
  EXPECT_EQ(flow.calls[0].exit_ticks, flow.end_ticks);
}

TEST(FlowsTest, SamplingOffLeavesNoFlowRegion) {
  FlowRun run = RunFlows("requests", 10, {"LIMPWATCH_FLOW_SAMPLE=0"});
  EXPECT_FALSE(run.has_flows);
  EXPECT_FALSE(run.snapshot_totals.present);
}

// Writes flows into a ring as the runtime does (flow_recorder.cc): a root
// with one child each, published one by one.
class RingWriter {
 public:
  RingWriter(const shm::SegmentView& view, uint32_t slot)
      : ring_(view.flow_ring(slot)), events_(view.flow_events(slot)), mask_(view.flow_events_per_thread() - 1) {}

  void Flow(uint32_t root, uint32_t child) {
    using shm::FlowEventKind;
    uint64_t begin = cursor_;
    Write(ticks_, 0, shm::PackFlowInfo(FlowEventKind::kBegin, 0, 42));
    Write(ticks_, root, shm::PackFlowInfo(FlowEventKind::kEnter, 0, 0));
    Write(ticks_ + 1, child, shm::PackFlowInfo(FlowEventKind::kEnter, 0, 1));
    Write(ticks_ + 2, child, shm::PackFlowInfo(FlowEventKind::kExit, 0, 1));
    Write(ticks_ + 3, root, shm::PackFlowInfo(FlowEventKind::kExit, 0, 0));
    uint64_t sequence = ring_->flows_published.load() + 1;
    Write(ticks_ + 3, uint32_t(sequence), shm::PackFlowInfo(FlowEventKind::kEnd, 0, uint32_t(cursor_ - begin)));
    ring_->flows_published.store(sequence);
    ring_->head.store(cursor_);
    ticks_ += 10;
  }

 private:
  void Write(uint64_t ticks, uint32_t function, uint32_t info) {
    shm::FlowEvent& event = events_[cursor_++ & mask_];
    event.ticks.store(ticks);
    event.function.store(function);
    event.info.store(info);
  }

  shm::FlowRingHeader* ring_;
  shm::FlowEvent* events_;
  uint64_t mask_;
  uint64_t cursor_ = 0;
  uint64_t ticks_ = 100;
};

TEST(FlowsTest, AReaderGetsEachFlowOnceAndCountsTheOverwrittenOnes) {
  shm::Geometry geometry;
  geometry.max_threads = 2;
  geometry.flow_events = 64;  // 10 flows of 6 events fit
  shm::OwnerInfo owner;
  owner.pid = getpid();
  std::string object = shm::SegmentObjectName(UniqueSegmentName("flowring"), getpid());
  std::string error;
  auto writer = shm::SegmentWriter::Create(object, geometry, owner, &error);
  ASSERT_TRUE(writer) << error;
  writer->Remove();
  ASSERT_TRUE(writer->view().has_flows());
  RingWriter ring(writer->view(), 1);
  shm::FlowReader reader;
  EXPECT_TRUE(reader.ReadNew(writer->view()).empty());

  for (int flow = 0; flow < 3; ++flow) ring.Flow(7, 8);
  std::vector<shm::RecordedFlow> first = reader.ReadNew(writer->view());
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first[0].sequence, 1u);
  EXPECT_EQ(first[2].sequence, 3u);
  EXPECT_EQ(first[1].slot, 1u);
  EXPECT_EQ(first[1].tid, 42u);
  EXPECT_TRUE(reader.ReadNew(writer->view()).empty()) << "nothing new";

  ring.Flow(7, 9);
  std::vector<shm::RecordedFlow> second = reader.ReadNew(writer->view());
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].sequence, 4u);
  EXPECT_EQ(second[0].calls[1].function, 9u);

  // 30 more: the ring keeps the newest whole ones, the others are lost.
  for (int flow = 0; flow < 30; ++flow) ring.Flow(7, 8);
  std::vector<shm::RecordedFlow> third = reader.ReadNew(writer->view());
  ASSERT_FALSE(third.empty());
  EXPECT_EQ(third.back().sequence, 34u);
  EXPECT_EQ(reader.totals().flows_lost + third.size(), 30u);
  EXPECT_EQ(reader.totals().flows_read, 4u + third.size());
  EXPECT_EQ(reader.totals().flows_malformed, 0u);
}

TEST(FlowsTest, ASegmentWhoseFlowRegionDisagreesWithItsGeometryIsRefused) {
  shm::Geometry geometry;
  geometry.max_threads = 2;
  geometry.flow_events = 100;  // rounded up to 128
  shm::OwnerInfo owner;
  owner.pid = getpid();
  std::string object = shm::SegmentObjectName(UniqueSegmentName("flowcheck"), getpid());
  std::string error;
  auto writer = shm::SegmentWriter::Create(object, geometry, owner, &error);
  ASSERT_TRUE(writer) << error;
  writer->Remove();
  uint8_t* base = writer->view().base();
  EXPECT_EQ(shm::ValidateSegment(base, writer->size()), "");
  EXPECT_EQ(writer->view().flow_events_per_thread(), 128u);
  EXPECT_EQ(writer->view().max_flow_events(), 64u);

  shm::FlowRegionDescriptor* descriptor = writer->view().flow_descriptor();
  descriptor->max_flow_events = 128;  // a flow as long as its ring: a reader could not trust it
  EXPECT_EQ(shm::ValidateSegment(base, writer->size()), "flow region does not match the geometry");
  descriptor->max_flow_events = 64;
  writer->view().header()->flow_events_per_thread = 100;
  EXPECT_EQ(shm::ValidateSegment(base, writer->size()), "flow ring size is not a power of two");
  writer->view().header()->flow_events_per_thread = 128;

  // A 1.12 segment had the field reserved: a reader takes it as one without flows.
  shm::Geometry old_geometry = geometry;
  old_geometry.flow_events = 0;
  auto old = shm::SegmentWriter::Create(object + "-old", old_geometry, owner, &error);
  ASSERT_TRUE(old) << error;
  old->Remove();
  old->view().header()->version_minor = 12;
  EXPECT_EQ(shm::ValidateSegment(old->view().base(), old->size()), "");
  EXPECT_FALSE(shm::SegmentView(old->view().base()).has_flows());
}

// The categories of a run's flows, by structure.
std::map<std::string, uint64_t> CategoriesOf(const FlowRun& run) {
  std::map<uint32_t, uint64_t> hash_of;
  std::map<uint64_t, std::string> name_of;
  for (const auto& [id, name] : run.names) {
    hash_of[id] = shm::FunctionNameHash(name);
    name_of[hash_of[id]] = name;
  }
  analyzer::FlowCategories categories;
  for (const shm::RecordedFlow& recorded : run.flows) {
    analyzer::FlowSample sample;
    sample.cut = recorded.cut;
    for (const shm::FlowCall& call : recorded.calls) {
      sample.calls.push_back({hash_of.at(call.function), call.depth, call.enter_ticks - recorded.begin_ticks,
                              call.exit_ticks - call.enter_ticks, call.exited});
    }
    categories.Add(analyzer::CategorizeFlow(sample, [&](uint64_t hash) { return name_of.at(hash); }));
  }
  std::map<std::string, uint64_t> counts;
  for (const auto& [key, category] : categories.all()) counts[category.structure] = category.count;
  return counts;
}

TEST(FlowsTest, CategoriesAreTheSameInEveryRunOfAProgramAndDifferWithTheCallTree) {
  ManifestFile manifest("request handle_request\n");
  std::vector<std::string> environment = {"LIMPWATCH_SELECT=" + manifest.path(), "LIMPWATCH_FLOW_SAMPLE=1"};
  std::map<std::string, uint64_t> first = CategoriesOf(RunFlows("requests", 30, environment));
  std::map<std::string, uint64_t> second = CategoriesOf(RunFlows("requests", 30, environment));
  std::map<std::string, uint64_t> expected = {
      {"handle_request(lookup_handle,parse_header)", 15},
      {"handle_request(lookup_handle,parse_header,store_block)", 15},
  };
  EXPECT_EQ(first, expected);
  EXPECT_EQ(second, expected);
}

analyzer::FlowSample Tree(const std::vector<std::pair<uint32_t, uint64_t>>& depth_and_function) {
  analyzer::FlowSample flow;
  uint64_t start = 0;
  for (const auto& [depth, function] : depth_and_function) flow.calls.push_back({function, depth, start++, 10, true});
  return flow;
}

TEST(FlowsTest, ACategoryIgnoresTheOrderOfChildrenAndHowOftenALoopRan) {
  auto name = [](uint64_t hash) { return std::string(1, char('a' + hash)); };
  auto category = [&](const analyzer::FlowSample& flow) { return analyzer::CategorizeFlow(flow, name).structure; };
  // a(b(c), d)
  std::string tree = category(Tree({{0, 0}, {1, 1}, {2, 2}, {1, 3}}));
  EXPECT_EQ(tree, "a(b(c),d)");
  EXPECT_EQ(category(Tree({{0, 0}, {1, 3}, {1, 1}, {2, 2}})), tree) << "children in another order";
  // A loop of 3 reads and one of 30 are one category; one read is another.
  analyzer::FlowSample three = Tree({{0, 0}, {1, 4}, {1, 4}, {1, 4}});
  analyzer::FlowSample thirty = Tree({{0, 0}});
  for (int read = 0; read < 30; ++read) thirty.calls.push_back({4, 1, uint64_t(read + 1), 1, true});
  EXPECT_EQ(category(three), "a(e*)");
  EXPECT_EQ(category(thirty), "a(e*)");
  EXPECT_EQ(category(Tree({{0, 0}, {1, 4}})), "a(e)");
  // A different tree is a different category, and a cut flow one of its own.
  EXPECT_NE(category(Tree({{0, 0}, {1, 1}, {1, 3}, {2, 2}})), tree);
  analyzer::FlowSample cut = Tree({{0, 0}, {1, 1}, {2, 2}, {1, 3}});
  cut.cut = true;
  EXPECT_EQ(category(cut), tree + " [cut]");
}

TEST(FlowsTest, ACategoryKeepsItsLatencyMeanVarianceAndSelfTimes) {
  auto name = [](uint64_t hash) { return std::string(1, char('a' + hash)); };
  analyzer::FlowCategories categories;
  for (uint64_t latency : {100, 200, 300, 400}) {
    analyzer::FlowSample flow;
    flow.calls = {{0, 0, 0, latency, true}, {1, 1, 1, 40, true}};
    categories.Add(analyzer::CategorizeFlow(flow, name));
  }
  ASSERT_EQ(categories.all().size(), 1u);
  const analyzer::FlowCategory& category = categories.all().begin()->second;
  EXPECT_EQ(category.count, 4u);
  EXPECT_DOUBLE_EQ(category.mean_ns, 250);
  EXPECT_NEAR(category.variance_ns2, 50000.0 / 3.0, 1e-6);  // sample variance of 100..400
  EXPECT_NEAR(category.cv(), std::sqrt(50000.0 / 3.0) / 250, 1e-12);
  EXPECT_DOUBLE_EQ(category.self_ns.at("a"), 1000 - 4 * 40);
  EXPECT_DOUBLE_EQ(category.self_ns.at("b"), 160);
}

TEST(FlowsTest, AFlowsRecordRoundTripsAndRefusesABrokenTree) {
  analyzer::FlowsRecord record;
  record.unix_ms = 1700000000000;
  record.flows_lost = 3;
  analyzer::FlowSample flow = Tree({{0, 0}, {1, 1}, {2, 2}, {1, 3}});
  flow.tid = 77;
  flow.begin_unix_ns = 1700000000000000000;
  flow.calls[2].exited = false;
  record.flows = {flow, flow};
  std::vector<uint8_t> bytes = analyzer::EncodeFlowsRecord(record);
  analyzer::FlowsRecord again;
  ASSERT_TRUE(analyzer::DecodeFlowsRecord(bytes.data(), bytes.size(), &again));
  EXPECT_EQ(analyzer::EncodeFlowsRecord(again), bytes);
  EXPECT_EQ(again.flows_lost, 3u);
  ASSERT_EQ(again.flows.size(), 2u);
  EXPECT_EQ(again.flows[1].tid, 77u);
  EXPECT_FALSE(again.flows[1].calls[2].exited);

  EXPECT_FALSE(analyzer::DecodeFlowsRecord(bytes.data(), bytes.size() - 1, &again)) << "cut short";
  analyzer::FlowsRecord skipping = record;
  skipping.flows[0].calls[1].depth = 2;  // a grandchild with no parent
  bytes = analyzer::EncodeFlowsRecord(skipping);
  EXPECT_FALSE(analyzer::DecodeFlowsRecord(bytes.data(), bytes.size(), &again));
}

// The analyzer records the flows beside its ticks, named, and loses none.
TEST(FlowsTest, TheAnalyzerRecordsTheFlowsBesideItsTicks) {
  ManifestFile manifest("request handle_request\n");
  std::string name = UniqueSegmentName("flowrec");
  SegmentCleanup cleanup(name);
  std::string record = "/tmp/" + name + ".lwtrace";
  ProgramRun run = RunProgram(TestProgram("flows"), {"serve", "1500"},
                              {"LIMPWATCH_NAME=" + name, "LIMPWATCH_SELECT=" + manifest.path(),
                               "LIMPWATCH_FLOW_SAMPLE=4", "LIMPWATCH_ANALYZE=1", "LIMPWATCH_ANALYZE_TICK_MS=100",
                               "LIMPWATCH_RECORD=" + record});
  ASSERT_EQ(run.exit_status, 0) << run.output;
  std::string error;
  auto reader = analyzer::TraceReader::Open(record, &error);
  ASSERT_TRUE(reader) << error;
  analyzer::TickRecord tick;
  std::vector<analyzer::FunctionName> names;
  std::map<uint64_t, std::string> name_of;
  analyzer::FlowsRecord flows;
  size_t ticks = 0, recorded = 0, lost = 0;
  for (analyzer::TraceReader::Item item; (item = reader->Next(&tick, &names, &flows)) != analyzer::TraceReader::Item::kEnd;) {
    if (item == analyzer::TraceReader::Item::kTick) ++ticks;
    if (item == analyzer::TraceReader::Item::kNames) {
      for (const auto& named : names) name_of[named.name_hash] = named.name;
    }
    if (item != analyzer::TraceReader::Item::kFlows) continue;
    lost += flows.flows_lost + flows.flows_unnamed;
    for (const analyzer::FlowSample& flow : flows.flows) {
      ++recorded;
      ASSERT_TRUE(name_of.count(flow.calls[0].name_hash)) << "a flow named before its names";
      EXPECT_EQ(name_of[flow.calls[0].name_hash], "handle_request");
      EXPECT_GE(flow.calls.size(), 3u);
      EXPECT_GT(flow.begin_unix_ns, uint64_t{1'600'000'000} * 1'000'000'000);
    }
  }
  std::remove(record.c_str());
  EXPECT_TRUE(reader->problems().empty()) << reader->problems().front();
  EXPECT_GE(ticks, 10u);
  // About 1,300 requests in 1.5 s, one in 4 sampled; those of the last
  // tick, after the analyzer's final read, are not recorded.
  EXPECT_GE(recorded, 100u);
  EXPECT_EQ(lost, 0u);
}

TEST(FlowsTest, ParseRefusesEventsThatAreNotAFlow) {
  using shm::FlowEventKind;
  std::vector<shm::FlowEventValue> events = {
      {10, 0, shm::PackFlowInfo(FlowEventKind::kBegin, 0, 77)},
      {10, 5, shm::PackFlowInfo(FlowEventKind::kEnter, 0, 0)},
      {12, 6, shm::PackFlowInfo(FlowEventKind::kEnter, 0, 1)},
      {13, 6, shm::PackFlowInfo(FlowEventKind::kExit, 0, 1)},
      {14, 5, shm::PackFlowInfo(FlowEventKind::kExit, 0, 0)},
      {14, 1, shm::PackFlowInfo(FlowEventKind::kEnd, 0, 5)},
  };
  shm::RecordedFlow flow;
  ASSERT_TRUE(shm::ParseFlow(events.data(), events.size(), &flow));
  EXPECT_EQ(flow.tid, 77u);
  ASSERT_EQ(flow.calls.size(), 2u);
  EXPECT_EQ(flow.calls[1].function, 6u);
  EXPECT_EQ(flow.calls[1].exit_ticks, 13u);

  auto broken = events;
  broken[3].function = 9;  // exits a function that is not open
  EXPECT_FALSE(shm::ParseFlow(broken.data(), broken.size(), &flow));
  broken = events;
  broken[2].info = shm::PackFlowInfo(FlowEventKind::kEnter, 0, 3);  // skips depths
  EXPECT_FALSE(shm::ParseFlow(broken.data(), broken.size(), &flow));
  broken = events;
  broken[4].ticks = 99;  // after the flow's end
  EXPECT_FALSE(shm::ParseFlow(broken.data(), broken.size(), &flow));
  EXPECT_FALSE(shm::ParseFlow(events.data(), 1, &flow));
}

}  // namespace
}  // namespace limpwatch::testing
