// limpwatch-eval: the accuracy table of limpwatch on the test-bed.
//
// Trains thresholds on fault-free ddw and ddr runs, then runs the matrix
// workload x fault x faulty server x repetition, each experiment fault-free,
// then faulty, then recovering, and scores it as seed 000's Table 1 does.
//
//   limpwatch-eval --out DIR [--servers 4] [--workloads ddw,ddr,iozonew,iozoner,postmark]
//                  [--faults disk-busy,disk-hog,...|all] [--reps 1] [--phases 15,20,15]
//                  [--train-seconds 20] [--no-train] [--first-faulty I] [--disk-images MIB]
//                  [--report FILE] [--check]
//
// The report page (--report, DIR/report.html by default) is the one
// `limpwatch report` writes, one section per experiment: its recordings
// replayed through the servers' analysis, each server's metrics against
// their thresholds over time, the fault's stretch marked.
//
// --disk-images MIB gives every server of every cluster (training included)
// a disk of its own: an ext4 image on a loop device (the launcher's
// `start --disk-images`). Without it all storage shares the machine's disk,
// and disk-hog slows every server alike. Not the default: it needs loop
// devices, which not every machine running the tests offers.
//
// When memory-hog is among the faults, every cluster (training included)
// runs each server in a memory cgroup of its own from its start (the
// launcher's `start --memory-groups`), which that fault needs.
//
// slow-path is a regression on every server at once (the launcher switches
// it on cluster-wide): it has no faulty server, so it is scored like a
// fault-free run, any alarm a false positive, and it runs under postmark only,
// the workload whose small-file creates it slows.
//
// --check exits 1 unless every fault-free or cluster-wide experiment raised
// no alarm and every other faulty one indicted its faulty server and no
// other (for CI).
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "list_files.h"
#include "report.h"
#include "rpca_scoring.h"
#include "report_html.h"
#include "scoring.h"
#include "subprocess.h"

namespace limpwatch::eval {
namespace {

constexpr uint64_t kGraceMs = 10000;  // windows overlapping the fault's end finish after it

struct Options {
  std::string out;
  int servers = 4;
  std::vector<std::string> workloads{"ddw", "ddr", "iozonew", "iozoner", "postmark"};
  std::vector<std::string> faults{"disk-busy",     "disk-hog",     "cpu-quota", "cpu-hog", "memory-hog",
                                  "receive-pktloss", "send-pktloss", "network-delay", "crash",   "hang",
                                  "emfile",        "enospc",       "slow-path"};
  int reps = 1;
  int fault_free_s = 15, faulty_s = 20, recovery_s = 15;
  int train_s = 20;
  bool train = true;
  std::string report;  // the report page; empty: DIR/report.html
  bool check = false;
  int first_faulty = 0;  // the rotation of faulty servers starts here
  int disk_image_mib = 0;  // 0: directories on the machine's disk
  std::string rule = "calibrated";  // the servers' decision rule (LIMPWATCH_ANALYZE_RULE)
};

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

uint64_t NowMs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
}

// Sleeps, but returns early (false) on Ctrl-C.
bool SleepSeconds(int seconds) {
  for (int tenth = 0; tenth < seconds * 10; ++tenth) {
    if (Interrupted()) return false;
    usleep(100000);
  }
  return !Interrupted();
}

std::string ExpectedResource(const std::string& fault) {
  if (fault.rfind("disk", 0) == 0) return "disk";
  if (fault.rfind("cpu", 0) == 0) return "cpu";
  if (fault == "memory-hog") return "memory";
  if (fault.find("pktloss") != std::string::npos || fault == "packet-loss" || fault == "network-delay" ||
      fault.find("network-hog") != std::string::npos) {
    return "network";
  }
  if (fault == "crash" || fault == "hang") return "process";
  return "";  // propagated errors: any resource will do
}

// Why the fault cannot reach the workload at all, or "" when it can. A full
// file system fails new blocks only, and ddr and iozoner read a file written
// before: no server call of theirs can fail with ENOSPC. slow-path slows
// small-file creates, which only postmark makes by the hundred. Such an
// experiment would measure nothing about the diagnosis.
std::string WhyFaultCannotActOn(const std::string& fault, const std::string& workload) {
  if (fault == "enospc" && (workload == "ddr" || workload == "iozoner")) {
    return "a read-only workload allocates nothing, so a full disk cannot fail it";
  }
  if (fault == "slow-path" && workload != "postmark") return "only postmark creates small files, the path it slows";
  return "";
}

// The launcher's fault and its flags for a class of the matrix. Seed 000's
// two packet-loss classes are the launcher's packet-loss in one direction:
// receive-pktloss drops what the server receives, send-pktloss what it sends.
std::vector<std::string> LauncherFault(const std::string& fault) {
  if (fault == "receive-pktloss") return {"packet-loss", "--direction", "receive"};
  if (fault == "send-pktloss") return {"packet-loss", "--direction", "send"};
  return {fault};
}

class Evaluation {
 public:
  explicit Evaluation(Options options) : options_(std::move(options)) {}

  int Run();

 private:
  std::vector<std::string> ClusterEnvironment(const std::string& directory) const;
  bool StartCluster(const std::string& directory, const std::string& extra_flag);
  void StopCluster(const std::string& directory);
  pid_t StartWorkload(const std::string& workload, const std::string& directory, int seconds);
  bool Train();
  bool RunExperiment(Experiment* experiment, int number);
  bool WriteReport(const std::vector<Experiment>& experiments, const std::string& table);
  void Progress(int done, int total, uint64_t started_ms);

  Options options_;
  std::string thresholds_;
  std::string manifest_ = LIMPWATCH_TESTBED_MANIFEST;
};

std::vector<std::string> Evaluation::ClusterEnvironment(const std::string& directory) const {
  std::vector<std::string> environment{
      "LIMPWATCH_ANALYZE=1",
      "LIMPWATCH_ALARMS=" + directory + "/%n.alarms",
      "LIMPWATCH_RECORD=" + directory + "/%n.lwtrace",
      "LIMPWATCH_MANIFEST=" + manifest_,
      // Every function traced; the request rule marks the roots of the request flows.
      std::string("LIMPWATCH_SELECT=") + LIMPWATCH_TESTBED_SELECTION,
      "LIMPWATCH_QUIET=1",
      "LIMPWATCH_ANALYZE_RULE=" + options_.rule,
  };
  if (!thresholds_.empty()) environment.push_back("LIMPWATCH_THRESHOLDS=" + thresholds_);
  return environment;
}

bool Evaluation::StartCluster(const std::string& directory, const std::string& extra_flag) {
  RunCommand({"/bin/mkdir", "-p", directory});
  std::vector<std::string> argv{LIMPWATCH_TESTBED_PATH, "start", "--dir", directory + "/cluster", "--servers",
                                std::to_string(options_.servers), "--base-port", "0"};
  if (!extra_flag.empty()) {
    argv.push_back(extra_flag.substr(0, extra_flag.find(' ')));
    argv.push_back(extra_flag.substr(extra_flag.find(' ') + 1));
  }
  if (options_.disk_image_mib > 0) {
    argv.push_back("--disk-images");
    argv.push_back(std::to_string(options_.disk_image_mib));
  }
  if (std::find(options_.faults.begin(), options_.faults.end(), "memory-hog") != options_.faults.end()) {
    argv.push_back("--memory-groups");
  }
  CommandOutput started = RunCommand(argv, ClusterEnvironment(directory));
  if (started.status != 0) {
    std::fprintf(stderr, "limpwatch-eval: the test-bed did not start in %s:\n%s\n", directory.c_str(),
                 started.output.c_str());
    return false;
  }
  return true;
}

void Evaluation::StopCluster(const std::string& directory) {
  RunCommand({LIMPWATCH_TESTBED_PATH, "clear-all", "--dir", directory + "/cluster"});
  RunCommand({LIMPWATCH_TESTBED_PATH, "stop", "--dir", directory + "/cluster"});
}

pid_t Evaluation::StartWorkload(const std::string& workload, const std::string& directory, int seconds) {
  std::vector<std::string> argv{LIMPWATCH_TESTBED_PATH, "run", workload, "--dir", directory + "/cluster", "--"};
  if (workload == "postmark") {
    // postmark has no time limit of its own: it runs until the runner stops it (SIGINT).
    argv.insert(argv.end(), {"--files", "200", "--transactions", "100000000"});
  } else {
    argv.insert(argv.end(), {"--size-mib", "64", "--seconds", std::to_string(seconds)});
  }
  // Clients are not servers: they neither analyze nor record.
  return StartCommand(argv, {"LIMPWATCH_ANALYZE=0", "LIMPWATCH_RECORD=", "LIMPWATCH_ALARMS="},
                      directory + "/workload.log");
}

bool Evaluation::Train() {
  std::vector<std::string> recordings;
  for (const std::string workload : {"ddw", "ddr"}) {
    std::string directory = options_.out + "/train-" + workload;
    std::fprintf(stderr, "training on fault-free %s (%d s)\n", workload.c_str(), options_.train_s);
    if (!StartCluster(directory, "")) return false;
    pid_t client = StartWorkload(workload, directory, options_.train_s);
    bool completed = SleepSeconds(options_.train_s + 2);
    StopCommand(client);
    StopCluster(directory);
    if (!completed) return false;
    for (const auto& file : ListFiles(directory, ".lwtrace")) recordings.push_back(file);
  }
  thresholds_ = options_.out + "/thresholds";
  std::vector<std::string> argv{LIMPWATCH_CLI_PATH, "train"};
  argv.insert(argv.end(), recordings.begin(), recordings.end());
  // Trained as the servers will analyze: with the manifest's idle functions
  // left out. The test-bed's servers do the same work, and a training run of
  // a minute sees each rare burst on one server only: pooled.
  argv.insert(argv.end(), {"-o", thresholds_, "-m", manifest_, "--pooled"});
  CommandOutput trained = RunCommand(argv);
  if (trained.status != 0) {
    std::fprintf(stderr, "limpwatch-eval: training failed:\n%s\n", trained.output.c_str());
    return false;
  }
  return true;
}

bool Evaluation::RunExperiment(Experiment* experiment, int number) {
  std::string directory = options_.out + "/experiment-" + std::to_string(number);
  std::string extra = experiment->fault == "enospc"
                          ? "--small-fs " + std::to_string(std::stoi(experiment->faulty_server.substr(6))) + ":48"
                          : "";
  if (!StartCluster(directory, extra)) return false;
  int total = options_.fault_free_s + options_.faulty_s + options_.recovery_s + 5;
  pid_t client = StartWorkload(experiment->workload, directory, total + 5);
  // Warm-up: the first windows fill and the feature set settles.
  bool ok = SleepSeconds(5);
  experiment->start_ms = NowMs();
  ok = ok && SleepSeconds(options_.fault_free_s);
  if (ok && experiment->fault != "none") {
    // "server<i>"; a cluster-wide fault takes every server whatever --server says
    std::string index = experiment->cluster_wide ? "0" : experiment->faulty_server.substr(6);
    experiment->fault_start_ms = NowMs();
    std::vector<std::string> inject{LIMPWATCH_TESTBED_PATH, "inject"};
    for (const std::string& part : LauncherFault(experiment->fault)) inject.push_back(part);
    for (const std::string& part : {std::string("--dir"), directory + "/cluster", std::string("--server"), index}) {
      inject.push_back(part);
    }
    CommandOutput injected = RunCommand(inject);
    std::ofstream(directory + "/inject.log") << injected.output;
    if (injected.status != 0) std::fprintf(stderr, "inject %s failed: %s\n", experiment->fault.c_str(), injected.output.c_str());
    ok = SleepSeconds(options_.faulty_s);
    experiment->fault_end_ms = NowMs();
    CommandOutput cleared = RunCommand({LIMPWATCH_TESTBED_PATH, "clear", LauncherFault(experiment->fault).front(),
                                        "--dir", directory + "/cluster", "--server", index});
    std::ofstream(directory + "/clear.log") << cleared.output;
  } else if (ok) {
    ok = SleepSeconds(options_.faulty_s);
  }
  ok = ok && SleepSeconds(options_.recovery_s);
  experiment->end_ms = NowMs();
  StopCommand(client);
  StopCluster(directory);
  for (const auto& file : ListFiles(directory, ".alarms")) {
    std::ifstream alarms(file);
    std::string line;
    while (std::getline(alarms, line)) {
      if (auto alarm = ParseAlarmLine(line)) experiment->alarms.push_back(*alarm);
    }
  }
  return ok;
}

// The page `limpwatch report` writes, one section per experiment: its
// recordings replayed with the servers' rule, thresholds and manifest.
bool Evaluation::WriteReport(const std::vector<Experiment>& experiments, const std::string& table) {
  report::ReplaySettings settings;
  std::vector<std::string> problems;
  settings.config = analyzer::ReadAnalyzerConfigFromEnvironment(&problems);
  settings.config.decision_rule = analyzer::ParseDecisionRule(options_.rule).value_or(settings.config.decision_rule);
  if (!thresholds_.empty() && settings.thresholds.Load(thresholds_, &problems)) settings.thresholds_path = thresholds_;
  if (settings.manifest.Load(manifest_, &problems)) settings.manifest_path = manifest_;
  report::ReportPage page;
  page.title = "limpwatch evaluation";
  page.preface = table;
  for (size_t index = 0; index < experiments.size(); ++index) {
    const Experiment& experiment = experiments[index];
    std::string directory = options_.out + "/experiment-" + std::to_string(index);
    std::vector<std::string> recordings = ListFiles(directory, ".lwtrace");
    std::sort(recordings.begin(), recordings.end());
    report::ClusterReport cluster;
    if (index == 0) cluster.problems = problems;
    std::string error;
    if (recordings.empty()) {
      cluster.problems.push_back(directory + ": no recordings");
    } else if (!report::BuildClusterReport(recordings, settings, &cluster, &error)) {
      cluster.problems.push_back(error);
    }
    cluster.title = "experiment " + std::to_string(index) + ": " + experiment.workload + " / " + experiment.fault +
                    (experiment.faulty_server.empty() ? std::string() : " on " + experiment.faulty_server) + " (run " +
                    std::to_string(experiment.repetition) + ")";
    if (experiment.fault_start_ms > 0) {
      cluster.marked.push_back({{experiment.fault_start_ms, experiment.fault_end_ms},
                                experiment.fault + (experiment.cluster_wide ? " injected on every server" : " injected"),
                                experiment.faulty_server});
    }
    ExperimentScore score = ScoreExperiment(experiment, kGraceMs);
    std::string note = "Scored on the " + std::to_string(experiment.alarms.size()) +
                       " alarm(s) the servers raised online: " +
                       (!score.true_positive_applies ? std::string()
                                                   : std::string(score.true_positive ? "" : "not ") + "found, ") +
                       (score.false_positive ? "a false positive" : "no false positive");
    if (score.latency_s) {
      char latency[64];
      std::snprintf(latency, sizeof latency, ", %.1f s from the fault to its alarm", *score.latency_s);
      note += latency;
    }
    if (score.resource_right) note += *score.resource_right ? ", resource right" : ", resource wrong";
    cluster.notes.push_back(note + ".");
    page.clusters.push_back(std::move(cluster));
  }
  std::string error;
  if (!report::WriteReportFile(options_.report, report::RenderReportHtml(page), &error)) {
    std::fprintf(stderr, "limpwatch-eval: %s\n", error.c_str());
    return false;
  }
  std::printf("report: %s\n", options_.report.c_str());
  return true;
}

void Evaluation::Progress(int done, int total, uint64_t started_ms) {
  double elapsed = double(NowMs() - started_ms) / 1000.0;
  double left = done > 0 ? elapsed / done * (total - done) : 0;
  int filled = total > 0 ? done * 30 / total : 0;
  std::fprintf(stderr, "\r[%.*s%*s] %d/%d experiments, %.0f s elapsed, about %.0f s left   ", filled,
               "##############################", 30 - filled, "", done, total, elapsed, left);
  if (done == total) std::fprintf(stderr, "\n");
}

int Evaluation::Run() {
  RunCommand({"/bin/mkdir", "-p", options_.out});
  if (options_.report.empty()) options_.report = options_.out + "/report.html";
  std::string unwritable;
  if (!report::CanWriteReportFile(options_.report, &unwritable)) {  // before hours of experiments, not after
    std::fprintf(stderr, "limpwatch-eval: %s\n", unwritable.c_str());
    return 1;
  }
  if (options_.disk_image_mib > 0) {  // the launcher says why, where loop devices cannot be used
    std::fprintf(stderr, "storage: a %d MiB disk image per server, each on a loop device of its own\n",
                 options_.disk_image_mib);
  }
  // Alarms files are appended to: a previous run's must not be scored again.
  // Only what this tool creates is removed, never the rest of --out.
  if (DIR* handle = opendir(options_.out.c_str())) {
    std::vector<std::string> previous;
    while (dirent* entry = readdir(handle)) {
      std::string name = entry->d_name;
      if (name.rfind("experiment-", 0) == 0 || name.rfind("train-", 0) == 0) previous.push_back(options_.out + "/" + name);
    }
    closedir(handle);
    for (const std::string& path : previous) RunCommand({"/bin/rm", "-rf", "--", path});
  }
  if (options_.train && !Train()) {
    StopAll();
    return 1;
  }
  std::vector<Experiment> experiments;
  int rotation = 0;
  for (const std::string& workload : options_.workloads) {
    for (int rep = 0; rep < options_.reps; ++rep) {
      Experiment fault_free;
      fault_free.workload = workload;
      fault_free.fault = "none";
      fault_free.repetition = rep;
      experiments.push_back(fault_free);
      for (const std::string& fault : options_.faults) {
        if (std::string why = WhyFaultCannotActOn(fault, workload); !why.empty()) {
          if (rep == 0) std::fprintf(stderr, "%s x %s not run: %s\n", fault.c_str(), workload.c_str(), why.c_str());
          continue;
        }
        Experiment experiment;
        experiment.workload = workload;
        experiment.fault = fault;
        experiment.cluster_wide = IsClusterWideFault(fault);
        if (!experiment.cluster_wide) {
          experiment.faulty_server =
              "server" + std::to_string((options_.first_faulty + rotation++) % options_.servers);
        }
        experiment.expected_resource = ExpectedResource(fault);
        experiment.repetition = rep;
        experiments.push_back(experiment);
      }
    }
  }
  uint64_t started = NowMs();
  int done = 0;
  Progress(0, int(experiments.size()), started);
  for (Experiment& experiment : experiments) {
    if (!RunExperiment(&experiment, done)) break;
    Progress(++done, int(experiments.size()), started);
  }
  experiments.resize(done);
  StopAll();
  if (Interrupted()) std::fprintf(stderr, "\ninterrupted: scoring the %d experiments done\n", done);

  auto classes = ScoreByFault(experiments, kGraceMs);
  std::string table = RenderTable(classes);
  std::printf("%s", table.c_str());
  std::ofstream(options_.out + "/results.json") << RenderJson(experiments, classes, kGraceMs);
  // The untrained rpca detector on the same recordings, beside the servers'
  // own verdicts (not part of --check: it is judged, not yet relied on).
  std::vector<std::string> rpca_problems;
  std::vector<Experiment> rpca = RpcaExperiments(experiments, options_.out, manifest_, &rpca_problems);
  for (const std::string& problem : rpca_problems) std::fprintf(stderr, "rpca: %s\n", problem.c_str());
  auto rpca_classes = ScoreByFault(rpca, kGraceMs);
  std::printf("\nThe rpca detector (robust PCA, no training), replayed on the same recordings:\n%s",
              RenderTable(rpca_classes).c_str());
  std::ofstream(options_.out + "/results-rpca.json") << RenderJson(rpca, rpca_classes, kGraceMs);
  bool reported = WriteReport(experiments, table);
  std::printf("results: %s/results.json\n", options_.out.c_str());
  if (!reported) return 1;
  if (!options_.check) return Interrupted() ? 130 : 0;
  bool passed = !experiments.empty();
  for (const Experiment& experiment : experiments) {
    ExperimentScore score = ScoreExperiment(experiment, kGraceMs);
    // Alarms before the experiment's start (the servers' own start) or after
    // its end (servers stopping look silent) are not scored, as in the table.
    bool good = !score.true_positive_applies ? !score.false_positive : score.true_positive && !score.false_positive;
    if (!good) {
      std::printf("CHECK FAILED: %s / %s on %s: %zu alarms, TP %d, FP %d\n", experiment.workload.c_str(),
                  experiment.fault.c_str(), experiment.faulty_server.c_str(), experiment.alarms.size(),
                  score.true_positive, score.false_positive);
      passed = false;
    }
  }
  std::printf("%s\n", passed ? "check passed" : "check failed");
  return passed ? 0 : 1;
}

constexpr const char* kUsage =
    "usage: limpwatch-eval --out DIR [--servers N] [--workloads a,b] [--faults a,b|all]\n"
    "                      [--reps N] [--phases FREE,FAULTY,RECOVERY] [--train-seconds S] [--no-train]\n"
    "                      [--first-faulty I] [--disk-images MIB] [--rule calibrated|seed] [--report FILE]\n"
    "                      [--check]\n"
    "Runs the fault matrix on the test-bed: for each workload and fault, a traced cluster on loopback, a\n"
    "fault-free stretch, the fault injected for real, a recovery; then scores the servers' alarms.\n"
    "  --out DIR            where the runs, recordings, alarms and the report go (required)\n"
    "  --servers N          servers per cluster, at least 3 (4)\n"
    "  --workloads a,b      of ddw ddr iozonew iozoner postmark (all five)\n"
    "  --faults a,b|all     of disk-busy disk-hog cpu-quota cpu-hog memory-hog receive-pktloss send-pktloss\n"
    "                       network-delay crash hang emfile enospc slow-path (all); slow-path is on every\n"
    "                       server at once: FP only, no TP\n"
    "  --reps N             repetitions of each experiment (1)\n"
    "  --phases F,X,R       seconds fault-free, faulty, recovering (15,20,15)\n"
    "  --train-seconds S    fault-free load recorded to train thresholds first (20)\n"
    "  --no-train           no training: the untrained defaults\n"
    "  --first-faulty I     the rotation of faulty servers starts at server I (0)\n"
    "  --disk-images MIB    each server's storage on a loop-mounted image of this size (0: the machine's disk)\n"
    "  --rule R             the servers' decision rule (calibrated)\n"
    "  --report FILE        where to write the report page: per experiment, each server's metrics\n"
    "                       against their thresholds over time, alarms and the fault marked, top\n"
    "                       functions (DIR/report.html; --html, accepted, changes nothing)\n"
    "  --check              exit 1 unless every fault-free or cluster-wide experiment raised no alarm and\n"
    "                       every other faulty one indicted its faulty server and no other\n";

int Usage(const char* problem) {
  std::fprintf(stderr, "limpwatch-eval: %s\n%s", problem, kUsage);
  return 2;
}

}  // namespace
}  // namespace limpwatch::eval

int main(int argc, char** argv) {
  using namespace limpwatch::eval;
  if (limpwatch::testbed::AsksForHelp(argc, argv)) return limpwatch::testbed::AnswerHelp(kUsage);
  Options options;
  for (int index = 1; index < argc; ++index) {
    std::string flag = argv[index];
    auto value = [&]() -> std::string { return index + 1 < argc ? argv[++index] : ""; };
    try {
      if (flag == "--out") options.out = value();
      else if (flag == "--servers") options.servers = std::stoi(value());
      else if (flag == "--workloads") options.workloads = Split(value());
      else if (flag == "--faults") {
        std::string faults = value();
        if (faults != "all") options.faults = Split(faults);
      } else if (flag == "--reps") options.reps = std::stoi(value());
      else if (flag == "--phases") {
        auto phases = Split(value());
        if (phases.size() != 3) return Usage("--phases takes three numbers of seconds");
        options.fault_free_s = std::stoi(phases[0]);
        options.faulty_s = std::stoi(phases[1]);
        options.recovery_s = std::stoi(phases[2]);
      } else if (flag == "--train-seconds") options.train_s = std::stoi(value());
      else if (flag == "--no-train") options.train = false;
      else if (flag == "--html") continue;  // the report is always written; kept for older scripts
      else if (flag == "--report") {
        options.report = value();
        if (options.report.empty()) return Usage("--report takes a file");
      }
      else if (flag == "--check") options.check = true;
      else if (flag == "--first-faulty") options.first_faulty = std::stoi(value());
      else if (flag == "--disk-images") options.disk_image_mib = std::stoi(value());
      else if (flag == "--rule") {
        options.rule = value();
        if (options.rule != "calibrated" && options.rule != "seed") return Usage("--rule is calibrated or seed");
      }
      else return Usage(("unknown option " + flag).c_str());
    } catch (const std::exception&) {
      return Usage(("bad value for " + flag).c_str());
    }
  }
  if (options.out.empty()) return Usage("--out DIR is required");
  if (options.servers < 3) return Usage("--servers must be at least 3 (peer comparison needs a majority)");
  if (geteuid() != 0) {
    // Faults need cgroups, nftables and mounts.
    std::fprintf(stderr, "limpwatch-eval: needs root to inject faults; skipped\n");
    return 77;
  }
  InstallInterruptHandlers();
  Evaluation evaluation(options);
  return evaluation.Run();
}
