// `limpwatch report`: the page it writes from recordings (well-formed, every
// server named, the faulty server's alarm at the time `diagnose` gives it,
// with its top functions, hostile names escaped), its failures, and the
// charts' downsampling and scales.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "analyzer/synthetic_cluster.h"
#include "html_text.h"
#include "limpwatch/analyzer/trace_file.h"
#include "limpwatch/shm/name_hash.h"
#include "peer/temp_dir.h"
#include "report_data.h"
#include "report_html.h"
#include "svg_chart.h"

namespace limpwatch::report {
namespace {

using analyzer::testing::TempDir;

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

CommandResult RunCli(const TempDir& directory, const std::string& arguments) {
  CommandResult result;
  std::string err_path = directory.File("stderr.txt");
  std::string command = std::string(LIMPWATCH_CLI_PATH) + " " + arguments + " 2>" + err_path;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t count;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, count);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = ReadFile(err_path);
  return result;
}

// One recording per synthetic server, named as `names` says (else as generated).
std::vector<std::string> WriteRecordings(const limpwatch::testing::SyntheticCluster& cluster, const TempDir& directory,
                                         const std::map<std::string, std::string>& names = {}) {
  std::vector<analyzer::FunctionName> name_list;
  for (const char* name : {"storage_pread_block", "storage_pwrite_block", "storage_fsync_object", "meta_lookup_key",
                           "net_recv_message", "net_send_message", "net_poll_loop", "flow_copy_buffer"}) {
    name_list.push_back({shm::FunctionNameHash(name), name});
  }
  std::vector<std::string> paths;
  int file = 0;
  for (auto& [generated, ticks] : limpwatch::testing::GenerateCluster(cluster)) {
    auto renamed = names.find(generated);
    std::string server = renamed == names.end() ? generated : renamed->second;
    std::string path = directory.File("recording-" + std::to_string(file++) + ".lwtrace");
    std::string error;
    auto writer = analyzer::TraceWriter::Open(path, server, 1000, &error);
    EXPECT_TRUE(writer) << error;
    if (!writer) continue;
    writer->Append(analyzer::TraceRecordType::kNames, analyzer::EncodeNamesRecord(name_list));
    for (analyzer::TickRecord& tick : ticks) {
      tick.node = server;
      writer->Append(analyzer::TraceRecordType::kTick, analyzer::EncodeTickRecord(tick));
    }
    EXPECT_TRUE(writer->Flush());
    paths.push_back(path);
  }
  return paths;
}

std::string Joined(const std::vector<std::string>& paths) {
  std::string text;
  for (const std::string& path : paths) text += " " + path;
  return text;
}

bool IsNameCharacter(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':'; }

// Every '&' in text starts an entity XML knows.
std::string CheckEntities(const std::string& text, size_t at) {
  static const std::regex entity("^&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);");
  for (size_t index = text.find('&'); index != std::string::npos; index = text.find('&', index + 1)) {
    if (!std::regex_search(text.substr(index, 12), entity)) return "bad entity near offset " + std::to_string(at + index);
  }
  return "";
}

// A minimal XML well-formedness check: one root, every tag closed in order,
// attributes quoted and unique, no stray '<' and only known entities.
// Returns the first problem, or empty.
std::string WellFormedProblem(const std::string& document) {
  size_t at = 0;
  if (document.rfind("<!DOCTYPE", 0) == 0) at = document.find('>') + 1;
  std::vector<std::string> open;
  int roots = 0;
  while (at < document.size()) {
    size_t tag = document.find('<', at);
    std::string text = document.substr(at, tag == std::string::npos ? std::string::npos : tag - at);
    if (std::string problem = CheckEntities(text, at); !problem.empty()) return problem;
    if (open.empty() && text.find_first_not_of(" \n\r\t") != std::string::npos) {
      return "text outside the root at offset " + std::to_string(at);
    }
    if (tag == std::string::npos) break;
    at = tag + 1;
    if (document.compare(at, 3, "!--") == 0) {
      size_t end = document.find("-->", at);
      if (end == std::string::npos) return "unclosed comment";
      at = end + 3;
      continue;
    }
    bool closing = document[at] == '/';
    if (closing) ++at;
    size_t name_start = at;
    while (at < document.size() && IsNameCharacter(document[at])) ++at;
    std::string name = document.substr(name_start, at - name_start);
    if (name.empty()) return "a '<' that starts no tag at offset " + std::to_string(tag);
    if (closing) {
      while (at < document.size() && std::isspace(static_cast<unsigned char>(document[at]))) ++at;
      if (at >= document.size() || document[at] != '>') return "bad closing tag </" + name;
      if (open.empty() || open.back() != name) {
        return "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + "> at offset " +
               std::to_string(tag);
      }
      open.pop_back();
      ++at;
      continue;
    }
    std::set<std::string> attributes;
    while (true) {
      while (at < document.size() && std::isspace(static_cast<unsigned char>(document[at]))) ++at;
      if (at >= document.size()) return "unterminated <" + name;
      if (document.compare(at, 2, "/>") == 0) {
        at += 2;
        if (open.empty()) ++roots;
        break;
      }
      if (document[at] == '>') {
        ++at;
        if (open.empty()) ++roots;
        open.push_back(name);
        break;
      }
      size_t attribute_start = at;
      while (at < document.size() && IsNameCharacter(document[at])) ++at;
      std::string attribute = document.substr(attribute_start, at - attribute_start);
      if (attribute.empty() || at + 1 >= document.size() || document[at] != '=' || document[at + 1] != '"') {
        return "bad attribute in <" + name + "> at offset " + std::to_string(attribute_start);
      }
      if (!attributes.insert(attribute).second) return "attribute " + attribute + " twice in <" + name + ">";
      size_t value_end = document.find('"', at + 2);
      if (value_end == std::string::npos) return "unterminated attribute value in <" + name + ">";
      std::string value = document.substr(at + 2, value_end - at - 2);
      if (value.find('<') != std::string::npos) return "'<' in an attribute value of <" + name + ">";
      if (std::string problem = CheckEntities(value, at + 2); !problem.empty()) return problem;
      at = value_end + 1;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> never closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

// The part of the page about one server: its heading to the next server's.
std::string ServerSection(const std::string& page, const std::string& escaped_name) {
  size_t start = page.find("<h3>" + escaped_name + "</h3>");
  if (start == std::string::npos) return "";
  size_t end = std::min(page.find("<div class=\"server\"", start), page.find("</section>", start));
  return page.substr(start, end - start);
}

std::vector<std::string> AlarmRows(const std::string& page) {
  std::vector<std::string> rows;
  for (size_t at = page.find("<tr class=\"alarm\">"); at != std::string::npos;
       at = page.find("<tr class=\"alarm\">", at + 1)) {
    rows.push_back(page.substr(at, page.find("</tr>", at) - at));
  }
  return rows;
}

struct DiagnosedAlarm {
  std::string server;
  uint64_t time_unix_ms = 0;
  std::vector<std::string> top_functions;
};

// The alarms `limpwatch diagnose --json` raises on the same recordings.
std::vector<DiagnosedAlarm> Diagnose(const TempDir& directory, const std::string& arguments) {
  CommandResult diagnosed = RunCli(directory, "diagnose --json" + arguments);
  EXPECT_EQ(diagnosed.status, 0) << diagnosed.err;
  std::vector<DiagnosedAlarm> alarms;
  std::istringstream lines(diagnosed.out);
  static const std::regex server("\"server\":\"([^\"]*)\""), time("\"time_unix_ms\":([0-9]+)"),
      name("\"name\":\"([^\"]*)\"");
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("{\"kind\":", 0) != 0) continue;
    DiagnosedAlarm alarm;
    std::smatch match;
    if (std::regex_search(line, match, server)) alarm.server = match[1];
    if (std::regex_search(line, match, time)) alarm.time_unix_ms = std::stoull(match[1]);
    for (std::sregex_iterator it(line.begin(), line.end(), name), end; it != end; ++it) {
      alarm.top_functions.push_back((*it)[1]);
    }
    alarms.push_back(alarm);
  }
  return alarms;
}

limpwatch::testing::SyntheticCluster SlowDiskCluster(int faulty_server) {
  limpwatch::testing::SyntheticCluster cluster;
  cluster.servers = 4;
  cluster.ticks = 120;
  cluster.seed = 22;
  cluster.fault = limpwatch::testing::SyntheticFault::kDiskTime;
  cluster.faulty_server = faulty_server;
  cluster.fault_start = 60;
  return cluster;
}

TEST(ReportCommandTest, MarksTheFaultyServersAlarmAtItsTimeWithItsTopFunctions) {
  TempDir directory;
  limpwatch::testing::SyntheticCluster cluster = SlowDiskCluster(1);
  std::string files = Joined(WriteRecordings(cluster, directory));
  std::string manifest = directory.Write("manifest", "# test manifest\nstorage_* disk\nnet_* network\n");
  std::string page_path = directory.File("report.html");

  CommandResult result = RunCli(directory, "report -m " + manifest + " -o " + page_path + files);
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("report: " + page_path), std::string::npos) << result.out;
  std::string page = ReadFile(page_path);
  EXPECT_EQ(WellFormedProblem(page), "");
  // Self-contained: nothing fetched, nothing run.
  for (const char* outside : {"<script", "src=", "href=\"http", "<link", "@import", "url("}) {
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  }
  for (int server = 0; server < cluster.servers; ++server) {
    EXPECT_NE(page.find("<h3>server" + std::to_string(server) + "</h3>"), std::string::npos) << server;
  }

  // The same alarms as diagnose, each in the table at its time with its top functions.
  std::vector<DiagnosedAlarm> alarms = Diagnose(directory, " -m " + manifest + files);
  ASSERT_FALSE(alarms.empty());
  std::vector<std::string> rows = AlarmRows(page);
  ASSERT_EQ(rows.size(), alarms.size());
  for (size_t index = 0; index < alarms.size(); ++index) {
    const DiagnosedAlarm& alarm = alarms[index];
    EXPECT_EQ(alarm.server, "server1");
    EXPECT_NE(rows[index].find(UtcDateTime(alarm.time_unix_ms)), std::string::npos) << rows[index];
    EXPECT_NE(rows[index].find(">server1</a>"), std::string::npos) << rows[index];
    EXPECT_NE(rows[index].find("<td>disk</td>"), std::string::npos) << rows[index];
    ASSERT_FALSE(alarm.top_functions.empty());
    for (const std::string& function : alarm.top_functions) {
      EXPECT_NE(rows[index].find("<li>" + function + " "), std::string::npos) << function << " in " << rows[index];
    }
  }
  // During the fault, soon after it starts.
  uint64_t fault_start_ms = (cluster.first_tick + uint64_t(cluster.fault_start)) * 1000;
  EXPECT_GE(alarms.front().time_unix_ms, fault_start_ms);
  EXPECT_LE(alarms.front().time_unix_ms, fault_start_ms + 20000);

  // Marked and shaded on the faulty server's charts, and on no other's.
  std::string faulty = ServerSection(page, "server1");
  EXPECT_NE(faulty.find("<title>alarm 1 (anomaly) at " + UtcTimeOfDay(alarms.front().time_unix_ms) +
                        " UTC: server1 limps on disk"),
            std::string::npos);
  EXPECT_NE(faulty.find("class=\"band indicted\""), std::string::npos);
  EXPECT_NE(faulty.find("class=\"line score\""), std::string::npos);
  EXPECT_NE(faulty.find("class=\"line threshold\""), std::string::npos);
  for (const char* healthy : {"server0", "server2", "server3"}) {
    std::string section = ServerSection(page, healthy);
    ASSERT_FALSE(section.empty()) << healthy;
    EXPECT_EQ(section.find("class=\"mark alarm"), std::string::npos) << healthy;
    EXPECT_EQ(section.find("class=\"band indicted\""), std::string::npos) << healthy;
  }
}

// Trained thresholds and the seed rule are taken as diagnose takes them, and
// give the page diagnose's alarms.
TEST(ReportCommandTest, TakesThresholdsAndTheRuleAsDiagnoseDoes) {
  TempDir directory;
  limpwatch::testing::SyntheticCluster training = SlowDiskCluster(1);
  training.fault = limpwatch::testing::SyntheticFault::kNone;
  training.seed = 21;
  std::string training_files = Joined(WriteRecordings(training, directory));
  std::string thresholds = directory.File("thresholds");
  CommandResult trained = RunCli(directory, "train --pooled -o " + thresholds + training_files);
  ASSERT_EQ(trained.status, 0) << trained.err;

  TempDir faulty_directory;
  std::string files = Joined(WriteRecordings(SlowDiskCluster(1), faulty_directory));
  for (const std::string& options : {" -t " + thresholds, " --rule seed -t " + thresholds}) {
    std::string page_path = directory.File("report.html");
    CommandResult result = RunCli(directory, "report -o " + page_path + options + files);
    ASSERT_EQ(result.status, 0) << options << ": " << result.err;
    std::string page = ReadFile(page_path);
    EXPECT_EQ(WellFormedProblem(page), "");
    EXPECT_NE(page.find("thresholds: " + thresholds), std::string::npos) << options;
    std::vector<DiagnosedAlarm> alarms = Diagnose(directory, options + files);
    ASSERT_FALSE(alarms.empty()) << options;
    std::vector<std::string> rows = AlarmRows(page);
    ASSERT_EQ(rows.size(), alarms.size()) << options;
    for (size_t index = 0; index < alarms.size(); ++index) {
      EXPECT_NE(rows[index].find(UtcDateTime(alarms[index].time_unix_ms)), std::string::npos) << rows[index];
      EXPECT_NE(rows[index].find(">" + alarms[index].server + "</a>"), std::string::npos) << rows[index];
    }
  }
}

TEST(ReportCommandTest, EscapesAHostileServerName) {
  TempDir directory;
  const std::string hostile = "<img src=x onerror=\"alert('x')\">&amp";
  const std::string escaped = "&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;amp";
  std::string files = Joined(WriteRecordings(SlowDiskCluster(2), directory, {{"server2", hostile}}));
  std::string manifest = directory.Write("manifest", "storage_* disk\nnet_* network\n");
  std::string page_path = directory.File("report.html");
  CommandResult result = RunCli(directory, "report -m " + manifest + " -o " + page_path + files);
  ASSERT_EQ(result.status, 0) << result.err;
  std::string page = ReadFile(page_path);
  EXPECT_EQ(WellFormedProblem(page), "");
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("onerror=\""), std::string::npos);
  EXPECT_NE(page.find("<h3>" + escaped + "</h3>"), std::string::npos);
  // It limps: its alarm names it, escaped, in the table and in its charts' tooltips.
  std::vector<std::string> rows = AlarmRows(page);
  ASSERT_FALSE(rows.empty());
  EXPECT_NE(rows.front().find(">" + escaped + "</a>"), std::string::npos) << rows.front();
  EXPECT_NE(ServerSection(page, escaped).find("UTC: " + escaped + " limps on disk"), std::string::npos);
}

TEST(ReportCommandTest, AMissingOrCorruptRecordingFailsInOneLine) {
  TempDir directory;
  std::vector<std::string> paths = WriteRecordings(SlowDiskCluster(1), directory);
  std::string page_path = directory.File("report.html");
  std::string junk = directory.Write("junk.lwtrace", "not a recording, whatever its name says");
  for (const std::string& bad : {directory.File("missing.lwtrace"), junk}) {
    CommandResult result = RunCli(directory, "report -o " + page_path + Joined(paths) + " " + bad);
    EXPECT_EQ(result.status, 1) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_EQ(result.err.rfind("limpwatch: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(bad), std::string::npos) << result.err;
    EXPECT_FALSE(std::ifstream(page_path).good()) << "no page is written";
  }
  // A page that cannot be written is a failure too.
  CommandResult unwritable = RunCli(directory, "report -o " + directory.File("no-such-dir/report.html") + Joined(paths));
  EXPECT_EQ(unwritable.status, 1) << unwritable.err;
  EXPECT_EQ(std::count(unwritable.err.begin(), unwritable.err.end(), '\n'), 1) << unwritable.err;
}

TEST(ReportCommandTest, BadUsageExitsTwo) {
  TempDir directory;
  std::string recording = WriteRecordings(SlowDiskCluster(1), directory).front();
  std::string page = directory.File("report.html");
  for (const std::string& arguments :
       {std::string("report"), "report " + recording, "report -o " + page, "report --bogus -o " + page + " " + recording,
        "report --rule fastest -o " + page + " " + recording, "report --budget 0 -o " + page + " " + recording,
        "report -o " + page + " " + directory.Write("series.csv", "time,peer,latency\n1,a,2\n")}) {
    CommandResult result = RunCli(directory, arguments);
    EXPECT_EQ(result.status, 2) << arguments << ": " << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << arguments << ": " << result.err;
  }
  CommandResult help = RunCli(directory, "report --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("limpwatch report RECORDINGS..."), std::string::npos) << help.out;
}

// Half an hour of six servers: the page stays small, and every line is cut
// to the chart's pixel columns.
TEST(ReportPageTest, HalfAnHourOfSixServersStaysSmall) {
  TempDir directory;
  limpwatch::testing::SyntheticCluster cluster;
  cluster.servers = 6;
  cluster.ticks = 1800;
  cluster.seed = 5;
  cluster.fault = limpwatch::testing::SyntheticFault::kDiskTime;
  cluster.faulty_server = 4;
  cluster.fault_start = 900;
  cluster.fault_end = 960;
  ReplaySettings settings;
  settings.manifest = limpwatch::testing::SyntheticManifest();
  ClusterReport report;
  std::string error;
  ASSERT_TRUE(BuildClusterReport(WriteRecordings(cluster, directory), settings, &report, &error)) << error;
  ASSERT_EQ(report.servers.size(), 6u);
  ReportPage page;
  page.title = "half an hour";
  page.clusters.push_back(report);
  std::string html = RenderReportHtml(page);
  EXPECT_EQ(WellFormedProblem(html), "");
  EXPECT_LT(html.size(), 512u * 1024u);  // about 100 KB: what the lines cost is bounded by the pixels
  size_t charts = 0;
  static const std::regex path("<path class=\"line [a-z]+\" d=\"([^\"]*)\"/>");
  for (std::sregex_iterator it(html.begin(), html.end(), path), end; it != end; ++it) {
    std::string d = (*it)[1];
    size_t points = std::count_if(d.begin(), d.end(), [](char c) { return c == 'M' || c == 'L' || c == 'H' || c == 'V'; });
    EXPECT_LE(points, size_t(2 * PlotColumns(360))) << d.substr(0, 200);
    ++charts;
  }
  EXPECT_GE(charts, 6u * 2u);
  // The faulty server's alarm is in it, within its minute of fault.
  ASSERT_FALSE(report.alarms.empty());
  EXPECT_EQ(report.alarms.front().server, "server4");
  uint64_t fault_start_ms = (cluster.first_tick + uint64_t(cluster.fault_start)) * 1000;
  EXPECT_GE(report.alarms.front().time_unix_ms, fault_start_ms);
  EXPECT_LE(report.alarms.front().time_unix_ms, fault_start_ms + 60000);
}

TEST(SvgChartTest, DownsamplingKeepsASpikeOfOnePoint) {
  ChartLine line;
  line.css_class = "score";
  std::mt19937 random(7);
  std::uniform_real_distribution<double> quiet(0.0, 1.0);
  for (int index = 0; index < 100000; ++index) {
    line.x.push_back(index);
    line.y.push_back(index == 54321 ? 1000.0 : quiet(random));
  }
  std::vector<ColumnPoint> points = DownsampleToColumns(line, 0, 100000, 300);
  EXPECT_LE(points.size(), 600u);
  EXPECT_GE(points.size(), 300u);
  double highest = 0;
  int spike_column = -1;
  for (const ColumnPoint& point : points) {
    if (point.y > highest) {
      highest = point.y;
      spike_column = point.column;
    }
  }
  EXPECT_EQ(highest, 1000.0);
  EXPECT_EQ(spike_column, 54321 * 300 / 100000);
  // Columns come in order, each with at most its min and its max.
  for (size_t index = 1; index < points.size(); ++index) EXPECT_GE(points[index].column, points[index - 1].column);
}

TEST(SvgChartTest, AGapBreaksTheLine) {
  ChartLine line;
  for (double y : {1.0, 2.0, std::nan(""), 3.0, 4.0}) {
    line.x.push_back(double(line.x.size()));
    line.y.push_back(y);
  }
  std::vector<ColumnPoint> points = DownsampleToColumns(line, 0, 5, 5);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_TRUE(points[0].starts_stretch);
  EXPECT_FALSE(points[1].starts_stretch);
  EXPECT_TRUE(points[2].starts_stretch);
  EXPECT_FALSE(points[3].starts_stretch);
  Chart chart;
  chart.x_to = 5;
  chart.lines = {line};
  std::string svg = RenderSvgChart(chart, ChooseYAxis(chart.lines));
  EXPECT_EQ(WellFormedProblem(svg), "");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(svg, match, std::regex("d=\"([^\"]*)\"")));
  EXPECT_EQ(std::count(match[1].first, match[1].second, 'M'), 2) << match[1];
}

TEST(SvgChartTest, LogScaleOnlyWhereScoresSpanDecades) {
  ChartLine spike;
  for (int index = 0; index < 100; ++index) {
    spike.x.push_back(index);
    spike.y.push_back(index == 50 ? 5000.0 : 0.5 + 0.01 * index);
  }
  YAxis log = ChooseYAxis({spike});
  EXPECT_EQ(log.scale, YScale::kLog);
  EXPECT_EQ(log.high, 10000.0);
  EXPECT_LE(log.low, 0.5);
  EXPECT_GT(log.low, 0.0);
  // Evidence against a threshold of 19.8: mostly 0, a climb to 30.
  ChartLine evidence, threshold;
  for (int index = 0; index < 100; ++index) {
    evidence.x.push_back(index);
    evidence.y.push_back(index < 80 ? 0.0 : 1.5 * (index - 80));
    threshold.x.push_back(index);
    threshold.y.push_back(19.8);
  }
  YAxis linear = ChooseYAxis({evidence, threshold});
  EXPECT_EQ(linear.scale, YScale::kLinear);
  EXPECT_EQ(linear.low, 0.0);
  EXPECT_GE(linear.high, 28.5);
  EXPECT_LE(linear.high, 50.0);
}

TEST(HtmlTextTest, EscapesMarkupQuotesAndControlCharacters) {
  EXPECT_EQ(EscapeHtml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(EscapeHtml(std::string("x\x01y\nz\x1b[2J\xff", 10)), "x?y\nz?[2J?");
  EXPECT_EQ(EscapeHtml("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 is kept
}

}  // namespace
}  // namespace limpwatch::report
