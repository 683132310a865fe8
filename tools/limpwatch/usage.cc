#include "usage.h"

#include <string>

#include "commands.h"
#include "output.h"

namespace limpwatch::cli {
namespace {

struct CommandText {
  std::string_view name;
  std::string_view synopsis;
  std::string_view details;
};

constexpr CommandText kCommands[] = {
    {"list", "limpwatch list [--json]",
     "  One line per segment in /dev/shm: OBJECT, NAME, PID, PROGRAM, STATE, SIZE, CREATED.\n"
     "  STATE is live, exited, stale, creating, or 'invalid: <reason>'.\n"
     "    --json            one JSON object {\"segments\": [...]}\n"},
    {"top", "limpwatch top NAME [-d SECONDS] [-n ITERATIONS] [--sort self|total|calls] [--limit N] [--samples]",
     "  Every SECONDS, the functions most active since the previous refresh.\n"
     "  NAME is a segment object name, a pid, or a LIMPWATCH_NAME.\n"
     "    -d, --delay SECONDS       refresh interval (default 1, at least 0.01)\n"
     "    -n, --iterations N        stop after N refreshes (default: until Ctrl-C or the owner exits)\n"
     "    -s, --sort self|total|calls   order rows by self time (default), total time or calls\n"
     "    -l, --limit N             show at most N functions (default 25, 0 for all)\n"
     "    --samples                 the CPU-sample profile instead: APPLICATION, IMAGE, FUNCTION,\n"
     "                              SAMPLES, % of the interval's samples, KERNEL UNDER (kernel\n"
     "                              samples under this user function), the sampler's source,\n"
     "                              rate and losses, and the node's kernel profile if recorded\n"
     "  SELF % is the function's share of all self time recorded in the interval.\n"
     "  On a terminal the screen is redrawn; otherwise refreshes follow each other,\n"
     "  separated by a blank line.\n"},
    {"dump", "limpwatch dump NAME [--json]",
     "  One consistent snapshot of a segment: header, every function, every live thread\n"
     "  with its open frames, process counters and diagnostics, and the CPU-sample profile.\n"
     "    --json            one JSON object instead of tables\n"},
    {"clean", "limpwatch clean [--dry-run] [--exited] [NAME...]",
     "  Removes stale segments (owner dead) and invalid ones whose owner pid is gone.\n"
     "  A live segment is never removed. With NAMEs (object name, pid or LIMPWATCH_NAME)\n"
     "  only matching segments are considered.\n"
     "    --exited          also remove segments kept after a normal exit (LIMPWATCH_KEEP)\n"
     "    --dry-run         print what would be removed, remove nothing\n"},
    {"alarms", "limpwatch alarms NAME [--follow] [--json]",
     "  The alarms in a segment's ring (raised by its in-process analyzer), each with\n"
     "  how many analyzers of the cluster hold it open (\"held by 4 of 4 analyzers\").\n"
     "    -f, --follow      keep printing new alarms until Ctrl-C or the owner exits;\n"
     "                      an alarm is printed again when more (or fewer) hold it\n"
     "    --json            one JSON object per line\n"},
    {"analyze", "limpwatch analyze NAME [-n TICKS]",
     "  Runs the analyzer of a server in this process, on its live segment, with the\n"
     "  peers of LIMPWATCH_PEERS / LIMPWATCH_PVFS_CONFIG; alarms go to stdout (and\n"
     "  LIMPWATCH_ALARMS). The LIMPWATCH_ANALYZE_* settings apply.\n"
     "    -n, --ticks N     stop after N ticks (default: until Ctrl-C or the owner exits)\n"},
    {"train", "limpwatch train FILES... -o THRESHOLDS [-m MANIFEST] [--pooled]",
     "  What fault-free recordings (LIMPWATCH_RECORD files of any number of servers and\n"
     "  runs, or CSV) teach the analyzers. The calibrated rule needs none of it: it\n"
     "  learns each metric's noise as it goes; trained, it starts from the noise and the\n"
     "  windows learnt here (a narrower margin from the first window) and from each\n"
     "  server's usual profile ratios. The seed rule's thresholds are written too: the\n"
     "  smallest threshold that removes every anomaly, found by binary search, doubled.\n"
     "    -o, --output FILE     where to write them\n"
     "    -m, --manifest FILE   the manifest the servers will analyze with: its idle\n"
     "                          functions are left out of the comparison, as online\n"
     "    --pooled              one seed threshold per metric for every server (the most\n"
     "                          tolerant one trained): for servers doing the same work,\n"
     "                          when a short training run saw each rare burst on one\n"
     "                          server only\n"},
    {"diagnose",
     "limpwatch diagnose FILES... [-t THRESHOLDS] [-m MANIFEST] [--rule calibrated|seed] [--budget DAYS]\n"
     "                   [--tick SECONDS] [--load COLUMNS] [--symptom COLUMNS] [--json] [--windows|--scores]\n"
     "       limpwatch diagnose --rpca RECORDINGS... [-m MANIFEST] [--json] [--windows]",
     "  Replays recordings of several servers through the online analysis, prints its\n"
     "  alarms and ends with a verdict per peer: healthy or limping, the share of its\n"
     "  windows that were anomalous, its median ratio to its peers per metric, when it\n"
     "  was first and last indicted, the resource and the top causes.\n"
     "  A FILE ending in .csv holds per-peer time series, one row per peer and sample:\n"
     "  a timestamp (unix seconds or ms, or ISO 8601), a peer and metric columns, in\n"
     "  any order, quoted or not; empty and NA cells are missing values; the sample\n"
     "  interval is found from the timestamps, and a missing stretch is missing data.\n"
     "  Every metric column is a symptom where more is worse (a latency, a service\n"
     "  time), except loads (throughput, requests): they explain latency and are never\n"
     "  a symptom. A column whose name says throughput, iops, ops, bytes, bandwidth,\n"
     "  rate or requests is taken as a load unless --symptom names it.\n"
     "    -t, --thresholds FILE   what `limpwatch train` learnt (recordings only)\n"
     "    -m, --manifest FILE     function-to-resource manifest\n"
     "    --rule RULE             calibrated (default: no training needed, a stated\n"
     "                            false-alarm budget) or seed (seed 000: trained\n"
     "                            thresholds, k of 2k-1 windows), for comparison\n"
     "    --budget DAYS           at most one false alarm per DAYS server-days on healthy\n"
     "                            peers (default 100; LIMPWATCH_ANALYZE_BUDGET)\n"
     "    --tick SECONDS          the CSV's sample interval, when not the timestamps'\n"
     "    --load COLUMNS          comma-separated load columns of a CSV\n"
     "    --symptom COLUMNS       comma-separated columns compared as symptoms whatever\n"
     "                            their names\n"
     "    --json                  alarms as JSON lines, then one JSON line per peer\n"
     "    --windows               one line per window with the peers it indicts and why\n"
     "    --scores                the same with every score (evidence, ratio, noise)\n"
     "  --rpca: CloudDiag's robust PCA instead of peer comparison, with no training at\n"
     "  all: each tick, rows (server, tick) of the last minute against the functions'\n"
     "  time per call; a function whose column the low-rank part does not explain, slow\n"
     "  on one server's newest ticks, votes for that server; k of 2k-1 steps indict it.\n"
     "  Ends with the functions most often anomalous. --windows: a line per step.\n"
     "  With request flows in the recordings, also CloudDiag per request category:\n"
     "  its flows from every server against its functions' own times; a function\n"
     "  slow in more of one server's flows than chance allows names that server.\n"},
    {"report",
     // One line: usage errors quote it in their one line.
     "limpwatch report RECORDINGS... -o FILE [-t THRESHOLDS] [-m MANIFEST] [--rule calibrated|seed] [--budget DAYS] "
     "[--title TEXT]",
     "  Replays recordings of several servers as `diagnose` does and writes the result as\n"
     "  one self-contained HTML page, readable offline and without a server: a table of\n"
     "  the servers, a table of the alarms (time, server, resource, metrics, top\n"
     "  functions, why), then per server one chart per compared metric: its score and\n"
     "  threshold over time (times in UTC), the windows it was indicted in shaded, its\n"
     "  alarms marked. Charts are SVG in the page; no script runs. A chart is linear from\n"
     "  0, or says log scale when its scores span decades.\n"
     "    -o, --output FILE       where to write the page (required)\n"
     "    -t, --thresholds FILE   what `limpwatch train` learnt\n"
     "    -m, --manifest FILE     function-to-resource manifest\n"
     "    --rule RULE             calibrated (default) or seed, as for diagnose\n"
     "    --budget DAYS           at most one false alarm per DAYS server-days (default 100)\n"
     "    --title TEXT            the page's title\n"},
    {"export",
     // One line: usage errors quote it in their one line.
     "limpwatch export RECORDINGS... [-o FILE] [--format chrome|folded|folded-flows] [--no-alarms] [-t THRESHOLDS] "
     "[-m MANIFEST]",
     "  Writes recordings for other tools to open.\n"
     "  chrome (the default): Chrome trace-event JSON, for Perfetto's UI or\n"
     "  chrome://tracing. One process per server; at each tick's end counters of its\n"
     "  I/O service times (dread, dwrite, nsread, ncread), calls, request bytes and\n"
     "  errors, its node's disk and CPU statistics, the time it waited for a CPU, lost\n"
     "  to packets, spent in syncs and faults, and the self time of its busiest\n"
     "  functions: those among the 5 with the most self time of some tick, at most 16,\n"
     "  the most self time first. Each alarm `diagnose` raises on the same recordings\n"
     "  is an instant event on its server, with its resource, metrics and functions.\n"
     "  Each recorded request flow is nested slices on its thread, one per call.\n"
     "  folded: folded stacks for flame graphs, one line 'server;function SAMPLES' per\n"
     "  function with CPU samples, summed over the recordings. Recordings keep no\n"
     "  whole call chains of samples: each stack is the server and the function.\n"
     "  folded-flows: the request flows' whole call stacks, 'server;root;...;function\n"
     "  MICROSECONDS', each stack's self time summed over the recorded flows.\n"
     "  Counters and stacks are written as the recordings are read, one record at a\n"
     "  time, in memory that does not grow with their length; the alarms' replay holds\n"
     "  every tick of every recording (about 40 bytes per function a tick ran),\n"
     "  which --no-alarms saves. A tick that two files of a server both hold is\n"
     "  exported twice.\n"
     "    -o, --output FILE       where to write (default, or -: standard output)\n"
     "    --format FORMAT         chrome (default), folded or folded-flows\n"
     "    --no-alarms             chrome without the alarms: no replay\n"
     "    -t, --thresholds FILE   the replay's thresholds, as for diagnose\n"
     "    -m, --manifest FILE     the replay's function-to-resource manifest\n"},
    {"compare",
     // One line: usage errors quote it in their one line.
     "limpwatch compare BEFORE... -- AFTER... | --split UNIX_MS RECORDINGS... [-m MANIFEST] [--json] [--html FILE] [--limit N] [--alpha P]",
     "  What changed between a period that went well (BEFORE) and one that did not\n"
     "  (AFTER), per function: Spectroscope's comparison of two periods, with functions\n"
     "  and the recordings' features ([file sync], [waiting for a CPU], ...) in place\n"
     "  of request flows. Each period is one or more recordings (yesterday's and\n"
     "  today's, before and after an upgrade), or, with --split, the ticks of one set\n"
     "  of recordings that end at or before UNIX_MS and those that end after it.\n"
     "  Per function, its time per call in each tick with calls (a feature without\n"
     "  calls: its time per tick), pooled over the period's servers. A response-time\n"
     "  mutation: the two-sample Kolmogorov-Smirnov test finds the two periods' times\n"
     "  differ (p < P, with at least 8 ticks in each). A structural one: timed in\n"
     "  one period only (new, vanished), in more ticks than chance explains (p < P).\n"
     "  BEFORE recordings that do not overlap in time are separate baseline runs\n"
     "  (say three healthy days): with two or more, a change is a mutation only when\n"
     "  AFTER lies further from every baseline run than two of them lie from each\n"
     "  other, in the distribution and in MS/S; healthy runs of one workload differ\n"
     "  in most functions by more than any p-value allows. Mutations are ranked by\n"
     "  their contribution to the change, calls per second x median time per call\n"
     "  after, minus the same before: the time the cluster spends in the function\n"
     "  per second (MS/S), the largest change first. RATIO: median after / before.\n"
     "    --json                  one JSON object\n"
     "    -l, --limit N           show the first N mutations (default 20, 0 for all)\n"
     "    --alpha P               the KS test's significance level (default 0.001: a few\n"
     "                            hundred functions are tested at once)\n"
     "    --split UNIX_MS         compare two time ranges of the same recordings\n"
     "    --html FILE             also write a page with the table and, per mutation, the\n"
     "                            distribution before (each baseline run) and after\n"
     "    -m, --manifest FILE     leave out its idle functions (threads waiting for work\n"
     "                            wait longer whenever there is less of it)\n"},
    {"flows", "limpwatch flows NAME | RECORDINGS... [--json] [-n N]",
     "  The request flows a segment holds in its rings, or that recordings kept\n"
     "  (LIMPWATCH_RECORD), grouped into categories by the structure of their call\n"
     "  trees: children sorted, a run of identical siblings written once and marked *\n"
     "  (a loop of 3 or 30 reads is one category), a flow cut at its ring's bound a\n"
     "  category of its own. Per category: its flows, their mean latency, its\n"
     "  coefficient of variation (CV: high when requests of one shape take very\n"
     "  different times) and the functions with the most self time per flow.\n"
     "  Flows are sampled by the runtime: LIMPWATCH_FLOW_SAMPLE, and `request` rules\n"
     "  in the LIMPWATCH_SELECT manifest for the functions that start a request.\n"
     "    --json                  one JSON object\n"
     "    -n, --top N             the N categories with the most flows (default 20)\n"},
    {"select", "limpwatch select [DUMP.json...] [--live NAME [--seconds S] [--window S]] [-m MANIFEST] [-o FILE] [--gcc-flags FILE]",
     "  Proposes what to trace from recorded profiles ('limpwatch dump --json' files, one\n"
     "  window each, or a live segment watched for S seconds). Kept: a function with\n"
     "  diagnostic weight (>= --min-calls calls or >= --min-seconds total time in some\n"
     "  window, or named by a rule of the resource MANIFEST) whose tracing cost does not\n"
     "  dominate (calls x --cost-ns <= --max-cost-percent of its self time), while the\n"
     "  kept ones together cost <= --budget-percent of the run time (the largest cost\n"
     "  share of its own time goes first; a function the MANIFEST names always stays).\n"
     "  Writes a LIMPWATCH_SELECT manifest of the kept functions and the GCC flag\n"
     "  -finstrument-functions-exclude-function-list= for a rebuild without the dropped\n"
     "  ones, and prints the estimated tracing cost saved.\n"
     "    --live NAME               observe this segment instead of (or besides) files\n"
     "    --seconds S, --window S   how long to observe (default 10) and the window (default 1)\n"
     "    -m, --manifest FILE       PVFS function-to-resource manifest\n"
     "    --min-calls N             default 100\n"
     "    --min-seconds S           default 1\n"
     "    --cost-ns NS              cost of a traced call (default 60)\n"
     "    --unselected-cost-ns NS   cost of an unselected call (default 8)\n"
     "    --max-cost-percent P      default 10\n"
     "    --budget-percent P        default 2\n"
     "    -o, --output FILE         the manifest (default: standard output)\n"
     "    --gcc-flags FILE          the GCC flags (default: standard output)\n"},
    {"serve",
     "limpwatch serve [--listen ADDR:PORT | --textfile DIR [--interval SECONDS | --once]] [--top N] [--open-seconds S] [--all-users]",
     "  Serves the metrics of every live segment on this node at /metrics, in the\n"
     "  Prometheus text format: per server its calls (traced, untracked, overflowed,\n"
     "  resynced), the top functions' calls and self time, I/O calls, bytes, time and\n"
     "  errors by fd kind and errno, dread/dwrite/dsync/nsread/ncread service times,\n"
     "  CPU samples, the analyzer's ticks, the peer exchange's datagrams, its scores\n"
     "  of the server per compared metric against their thresholds, and the alarms\n"
     "  its analyzer raised (counted, and open as a gauge). Reading a segment\n"
     "  never blocks its server. Prints the URL it serves on, then runs until\n"
     "  SIGINT / SIGTERM. Metric names and labels: docs/prometheus.md.\n"
     "    -l, --listen ADDR:PORT  where to listen (default 127.0.0.1:9434; port 0: any\n"
     "                            free port); whoever reaches it reads every served\n"
     "                            segment's metrics\n"
     "    --top N                 function series per server, the most self time first\n"
     "                            (default 20)\n"
     "    --open-seconds S        an alarm counts as open this long after its window\n"
     "                            (default 60: twice the analyzer's 30 s suppression)\n"
     "    --all-users             also serve the segments of other users this process can\n"
     "                            open (by default only its own user's)\n"
     "    --textfile DIR          instead of listening, write DIR/limpwatch.prom for the\n"
     "                            node_exporter textfile collector (atomic rename)\n"
     "    --interval SECONDS      how often to write it (default 15)\n"
     "    --once                  write it once and exit\n"},
    {"help", "limpwatch help [COMMAND]", "  This text, or the help of one command.\n"},
    {"version", "limpwatch version", "  The version of this tool.\n"},
};

const CommandText* Find(std::string_view command) {
  for (const auto& text : kCommands) {
    if (text.name == command) return &text;
  }
  return nullptr;
}

}  // namespace

std::string FullHelp() {
  std::string help = "limpwatch: read the tracing segments of limpwatch-traced processes\n\nusage:\n";
  for (const auto& text : kCommands) {
    help += "  ";
    help += text.synopsis;
    help += '\n';
  }
  for (const auto& text : kCommands) {
    help += '\n';
    help += text.synopsis;
    help += '\n';
    help += text.details;
  }
  help += "\nExit status: 0 on success, 1 when a segment cannot be read, 2 on a usage error.\n";
  return help;
}

std::string CommandHelp(std::string_view command) {
  const CommandText* text = Find(command);
  if (text == nullptr) return {};
  return "usage: " + std::string(text->synopsis) + "\n" + std::string(text->details);
}

std::string_view CommandSynopsis(std::string_view command) {
  const CommandText* text = Find(command);
  return text == nullptr ? std::string_view() : text->synopsis;
}

int UsageError(std::string_view command, std::string_view problem) {
  std::string message = std::string(command) + ": " + std::string(problem);
  std::string_view synopsis = CommandSynopsis(command);
  if (!synopsis.empty()) message += " (usage: " + std::string(synopsis) + ")";
  return Fail(kExitUsage, message);
}

}  // namespace limpwatch::cli
