// pvfs-patches/: the OrangeFS 2.10 resource manifest and default selection
// parse with the parsers limpwatch uses at run time, every rule matters (no
// duplicate, none made dead by another), and they put OrangeFS functions
// where a diagnosis needs them. No OrangeFS is needed: the names below are
// the ones the files are about.
#include <fnmatch.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "limpwatch/analyzer/resource_manifest.h"
#include "selection_manifest.h"

namespace {

using limpwatch::analyzer::ResourceManifest;
using limpwatch::runtime::FunctionFacts;
using limpwatch::runtime::IsSelected;
using limpwatch::runtime::SelectionManifest;
using limpwatch::shm::Resource;

const std::string kManifest = std::string(LIMPWATCH_PVFS_PATCHES_DIR) + "/pvfs-2.10-functions.manifest";
const std::string kSelection = std::string(LIMPWATCH_PVFS_PATCHES_DIR) + "/pvfs-2.10-default.select";

struct Line {
  int number;
  std::vector<std::string> fields;
};

// The non-comment fields of every rule line, read independently of the
// parsers under test.
std::vector<Line> RuleLines(const std::string& path) {
  std::ifstream file(path);
  std::vector<Line> lines;
  std::string text;
  for (int number = 1; std::getline(file, text); ++number) {
    size_t hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    Line line{number, {}};
    for (std::string word; words >> word;) line.fields.push_back(word);
    if (!line.fields.empty()) lines.push_back(line);
  }
  return lines;
}

bool Matches(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// True when every name `covered` can match is matched by `cover`: the text of
// `covered` (its '*' taken literally) matches `cover`, whose wildcards are
// only '*' (so a literal '*' in the text is matched too).
bool Covers(const std::string& cover, const std::string& covered) {
  return cover.find_first_of("?[") == std::string::npos && Matches(cover, covered);
}

Resource ResourceOf(const ResourceManifest& manifest, const std::string& function) {
  return manifest.Classify(function);
}

TEST(OrangefsManifest, ParsesWithoutProblems) {
  ResourceManifest manifest;
  std::vector<std::string> problems;
  ASSERT_TRUE(manifest.Load(kManifest, &problems)) << kManifest;
  EXPECT_TRUE(problems.empty()) << problems.front();
  std::vector<Line> lines = RuleLines(kManifest);
  EXPECT_EQ(manifest.size(), lines.size());
  EXPECT_GT(manifest.size(), 100u);
  for (const Line& line : lines) {
    ASSERT_EQ(line.fields.size(), 2u) << "line " << line.number;
    EXPECT_TRUE(line.fields[1] == "disk" || line.fields[1] == "network" || line.fields[1] == "cpu" ||
                line.fields[1] == "memory" || line.fields[1] == "idle")
        << "line " << line.number << ": " << line.fields[1];
  }
}

TEST(OrangefsManifest, NoDuplicateAndNoRuleShadowedByAnEarlierOne) {
  std::vector<Line> lines = RuleLines(kManifest);
  std::map<std::string, int> seen;
  for (size_t later = 0; later < lines.size(); ++later) {
    const std::string& pattern = lines[later].fields[0];
    auto [where, inserted] = seen.emplace(pattern, lines[later].number);
    EXPECT_TRUE(inserted) << pattern << " on lines " << where->second << " and " << lines[later].number;
    for (size_t earlier = 0; earlier < later; ++earlier) {
      const std::string& cover = lines[earlier].fields[0];
      if (cover == pattern) continue;  // reported as a duplicate
      EXPECT_FALSE(Covers(cover, pattern))
          << "line " << lines[later].number << " (" << pattern << ") can never match: line "
          << lines[earlier].number << " (" << cover << ") takes all its names first";
    }
  }
}

TEST(OrangefsManifest, ClassifiesEachLayerOfTheServer) {
  ResourceManifest manifest;
  std::vector<std::string> problems;
  ASSERT_TRUE(manifest.Load(kManifest, &problems));
  const std::vector<std::pair<const char*, Resource>> expected = {
      // trove / dbpf: data and metadata on the storage directory
      {"dbpf_bstream_rw_list_op_svc", Resource::kDisk},
      {"dbpf_bstream_flush_op_svc", Resource::kDisk},
      {"dbpf_pwrite", Resource::kDisk},
      {"alt_lio_thread", Resource::kDisk},
      {"dbpf_keyval_write_op_svc", Resource::kDisk},
      {"dbpf_dspace_getattr_op_svc", Resource::kDisk},
      {"dbpf_db_put", Resource::kDisk},
      {"dbpf_db_cursor_get", Resource::kDisk},
      {"dbpf_sync_coalesce", Resource::kDisk},
      {"dbpf_open_cache_get", Resource::kDisk},
      {"dbpf_do_one_work_cycle", Resource::kDisk},
      {"trove_bstream_write_list", Resource::kDisk},
      {"trove_keyval_read", Resource::kDisk},
      {"job_trove_bstream_read_list", Resource::kDisk},
      {"trove_write_callback_fn", Resource::kDisk},
      {"mdb_txn_commit", Resource::kDisk},
      // BMI TCP
      {"BMI_tcp_post_send", Resource::kNetwork},
      {"BMI_sockio_nbvector", Resource::kNetwork},
      {"BMI_testcontext", Resource::kNetwork},
      {"tcp_do_work", Resource::kNetwork},
      {"tcp_do_work_recv", Resource::kNetwork},
      {"work_on_send_op", Resource::kNetwork},
      {"payload_progress", Resource::kNetwork},
      {"job_bmi_send", Resource::kNetwork},
      {"bmi_send_callback_fn", Resource::kNetwork},
      {"bmi_recv_callback_wrapper", Resource::kNetwork},
      {"construct_poll_plan", Resource::kNetwork},
      // jobs, flows, request scheduler, state machines, encoding: CPU
      {"fp_multiqueue_post", Resource::kCpu},
      {"PINT_flow_post", Resource::kCpu},
      {"PINT_req_sched_post", Resource::kCpu},
      {"PINT_state_machine_invoke", Resource::kCpu},
      {"PINT_sm_frame", Resource::kCpu},
      {"prelude_req_sched", Resource::kCpu},
      {"getattr_verify_attribs", Resource::kCpu},
      {"io_start_flow", Resource::kCpu},
      {"small_io_start_job", Resource::kCpu},
      {"server_post_unexpected_recv", Resource::kCpu},
      {"lebf_decode_req", Resource::kCpu},
      {"logical_to_physical_offset", Resource::kCpu},
      {"gen_posix_mutex_lock", Resource::kCpu},
      {"qlist_add_tail", Resource::kCpu},
      {"qhash_search", Resource::kCpu},
      {"id_gen_fast_register", Resource::kCpu},
      {"ds_attr_compare", Resource::kCpu},
      {"dbpf_op_queue_empty", Resource::kCpu},
      {"trove_handle_alloc", Resource::kCpu},
      {"op_list_search", Resource::kCpu},
      // the exceptions taken before their family's glob
      {"dbpf_attr_cache_elem_lookup", Resource::kMemory},
      {"dbpf_queued_op_alloc", Resource::kMemory},
      {"BMI_memalloc", Resource::kMemory},
      {"BMI_tcp_memfree", Resource::kMemory},
      {"alloc_tcp_method_op", Resource::kMemory},
      {"PINT_malloc", Resource::kMemory},
      {"PINT_free", Resource::kMemory},
      {"my_glibc_malloc", Resource::kMemory},
      {"PINT_smcb_alloc", Resource::kMemory},
      {"PINT_tcache_lookup", Resource::kMemory},
  };
  for (const auto& [function, resource] : expected) {
    EXPECT_EQ(ResourceOf(manifest, function), resource) << function;
  }
  // Functions of no listed family stay unknown rather than guessed.
  EXPECT_EQ(ResourceOf(manifest, "main"), Resource::kUnknown);
  EXPECT_EQ(ResourceOf(manifest, "get_trove_sync_data"), Resource::kUnknown);
}

SelectionManifest LoadSelection() {
  SelectionManifest selection;
  std::string error;
  EXPECT_TRUE(limpwatch::runtime::LoadSelectionManifest(kSelection, &selection, &error)) << error;
  return selection;
}

bool Selected(const SelectionManifest& selection, const char* name) {
  FunctionFacts facts;
  facts.raw_name = name;
  facts.display_name = name;
  return IsSelected(selection, facts);
}

TEST(OrangefsManifest, TheWaitsForWorkAreIdleAndTheWorkAroundThemIsNot) {
  ResourceManifest manifest;
  std::vector<std::string> problems;
  ASSERT_TRUE(manifest.Load(kManifest, &problems));
  ASSERT_TRUE(manifest.has_idle_rules());
  // pthread_cond_timedwait for trove completions and finished jobs,
  // epoll_wait for the sockets: about a second a second of waiting each.
  for (const char* wait : {"dbpf_dspace_test", "dbpf_dspace_testsome", "dbpf_dspace_testcontext", "job_test",
                           "job_testsome", "job_testcontext", "BMI_socket_collection_testglobal"}) {
    EXPECT_TRUE(manifest.IsIdle(wait)) << wait;
  }
  for (const char* work : {"tcp_do_work", "BMI_testcontext", "dbpf_dspace_create_op_svc", "dbpf_dspace_getattr_op_svc",
                           "job_trove_bstream_write_list", "dbpf_db_sync"}) {
    EXPECT_FALSE(manifest.IsIdle(work)) << work;
  }
  // The epoll wait is traced on its own, or it would be tcp_do_work's time.
  EXPECT_TRUE(Selected(LoadSelection(), "BMI_socket_collection_testglobal"));
}

TEST(OrangefsSelection, ParsesWithTheRuntimeParser) {
  SelectionManifest selection = LoadSelection();
  std::vector<Line> lines = RuleLines(kSelection);
  ASSERT_EQ(selection.rules.size(), lines.size());
  EXPECT_TRUE(selection.has_include);
  for (size_t i = 0; i < lines.size(); ++i) {
    // Every line is "include|exclude|request <pattern>": no bare pattern, no extra word.
    ASSERT_EQ(lines[i].fields.size(), 2u) << "line " << lines[i].number;
    const std::string& keyword = lines[i].fields[0];
    EXPECT_TRUE(keyword == "include" || keyword == "exclude" || keyword == "request") << "line " << lines[i].number;
    EXPECT_EQ(selection.rules[i].request, keyword == "request") << "line " << lines[i].number;
    EXPECT_EQ(selection.rules[i].include, keyword != "exclude") << "line " << lines[i].number;
    EXPECT_EQ(selection.rules[i].pattern, lines[i].fields[1]) << "line " << lines[i].number;
  }
}

TEST(OrangefsSelection, NoDuplicateDeadOrRedundantRule) {
  SelectionManifest selection = LoadSelection();
  // The selecting rules; the request rules mark, and are checked below.
  std::vector<limpwatch::runtime::SelectionRule> rules;
  for (const auto& rule : selection.rules) {
    if (!rule.request) rules.push_back(rule);
  }
  std::set<std::pair<int, std::string>> seen;
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_TRUE(seen.emplace(static_cast<int>(rules[i].target), rules[i].pattern).second)
        << "duplicate rule " << rules[i].pattern;
    // The last match wins: a later rule covering this one leaves it dead.
    for (size_t later = i + 1; later < rules.size(); ++later) {
      if (rules[later].target != rules[i].target || rules[later].pattern == rules[i].pattern) continue;
      EXPECT_FALSE(Covers(rules[later].pattern, rules[i].pattern))
          << rules[i].pattern << " is overridden by the later " << rules[later].pattern;
    }
    // An earlier rule of the same kind covering this one, with no rule of the
    // other kind in between touching its names, makes this one redundant.
    for (size_t earlier = 0; earlier < i; ++earlier) {
      if (rules[earlier].target != rules[i].target || rules[earlier].include != rules[i].include ||
          !Covers(rules[earlier].pattern, rules[i].pattern)) {
        continue;
      }
      bool reversed_between = false;
      for (size_t between = earlier + 1; between < i; ++between) {
        if (rules[between].include != rules[i].include &&
            (Matches(rules[between].pattern, rules[i].pattern) || Matches(rules[i].pattern, rules[between].pattern))) {
          reversed_between = true;
        }
      }
      EXPECT_TRUE(reversed_between) << rules[i].pattern << " adds nothing to " << rules[earlier].pattern;
    }
  }
}

TEST(OrangefsSelection, DropsTheHotHelpersAndKeepsTheDiagnosticFunctions) {
  SelectionManifest selection = LoadSelection();
  // FIELD-NOTES: the most called functions of a real server, tiny and of
  // little diagnostic weight.
  for (const char* helper :
       {"gen_posix_mutex_lock", "gen_posix_mutex_unlock", "ds_attr_compare", "keyval_compare", "qlist_add_tail",
        "qlist_del", "PINT_malloc", "PINT_free", "my_glibc_malloc", "my_glibc_free", "hash_key", "qhash_search",
        "op_list_search", "dbpf_op_queue_empty", "id_gen_fast_register", "id_gen_safe_lookup", "construct_poll_plan",
        "logical_to_physical_offset", "next_mapped_offset",
        "trove_coll_to_method_callback", "dbpf_open_cache_find_entry", "PINT_sm_frame", "dbpf_attr_cache_elem_lookup",
        "dbpf_queued_op_complete", "BMI_memalloc"}) {
    EXPECT_FALSE(Selected(selection, helper)) << helper;
  }
  for (const char* diagnostic :
       {"dbpf_bstream_rw_list_op_svc", "dbpf_keyval_write_op_svc", "dbpf_dspace_create_op_svc", "dbpf_db_put",
        "dbpf_sync_coalesce", "alt_lio_thread", "trove_bstream_write_list", "trove_keyval_read", "mdb_txn_commit",
        "BMI_tcp_post_send", "BMI_sockio_nbvector", "BMI_testcontext", "tcp_do_work", "work_on_recv_op",
        "payload_progress", "job_trove_bstream_write_list", "job_bmi_send", "job_flow", "bmi_recv_callback_fn",
        "trove_write_callback_fn", "fp_multiqueue_post", "PINT_req_sched_post", "server_post_unexpected_recv",
        "prelude_req_sched", "getattr_verify_attribs", "io_start_flow", "small_io_start_job", "crdirent_validate",
        "PINT_process_request", "PINT_decode"}) {
    EXPECT_TRUE(Selected(selection, diagnostic)) << diagnostic;
  }
  // A list of what to trace: what it does not name is not traced.
  EXPECT_FALSE(Selected(selection, "main"));
  EXPECT_FALSE(Selected(selection, "gossip_debug_fp"));
}

TEST(OrangefsSelection, MarksWhereARequestsWorkStartsAsTheRootOfItsFlows) {
  SelectionManifest selection = LoadSelection();
  EXPECT_TRUE(selection.has_request);
  for (const char* root : {"server_state_machine_start", "PINT_state_machine_continue"}) {
    limpwatch::runtime::FunctionFacts facts{root, root, {}, {}};
    EXPECT_TRUE(IsRequestRoot(selection, facts)) << root;
    EXPECT_TRUE(Selected(selection, root)) << root << ": a root must be traced to start a flow";
  }
  for (const char* inside : {"dbpf_bstream_rw_list_op_svc", "job_flow", "server_post_unexpected_recv", "main"}) {
    limpwatch::runtime::FunctionFacts facts{inside, inside, {}, {}};
    EXPECT_FALSE(IsRequestRoot(selection, facts)) << inside;
  }
}

TEST(OrangefsSelection, EveryIncludedFamilyHasAResourceInTheManifest) {
  ResourceManifest manifest;
  std::vector<std::string> problems;
  ASSERT_TRUE(manifest.Load(kManifest, &problems));
  SelectionManifest selection = LoadSelection();
  for (const auto& rule : selection.rules) {
    if (!rule.include) continue;
    // The pattern's own text is a name of the family (its '*' literal).
    EXPECT_NE(manifest.Classify(rule.pattern), Resource::kUnknown) << "include " << rule.pattern;
  }
}

}  // namespace
