// `limpwatch serve`: the node's live segments as Prometheus metrics, over
// HTTP (/metrics) or as a node_exporter textfile.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "output.h"
#include "serve/http_server.h"
#include "serve/listen_address.h"
#include "serve/metrics_page.h"
#include "serve/serve_routes.h"
#include "serve/textfile.h"
#include "stop_signals.h"
#include "usage.h"

namespace limpwatch::cli {
namespace {

constexpr OptionSpec kServeOptions[] = {
    {"--listen", "-l", true},   {"--textfile", "", true}, {"--interval", "", true},
    {"--once", "", false},      {"--top", "", true},      {"--open-seconds", "", true},
    {"--all-users", "", false}, {"--help", "-h", false},
};

// Collections closer together than this are one: a hundred scrapers arriving
// at once cost the node one reading of its segments.
constexpr int kReuseCollectionMs = 250;
// How often the scores are recorded for the dashboard: the analyzer compares
// a window a second by default.
constexpr int kScoreRecordMs = 1000;

struct ServeSettings {
  serve::ListenAddress listen;
  std::string textfile_directory;
  double interval_seconds = 15;
  bool once = false;
  bool all_users = false;
  serve::ExpositionSettings exposition;
};

int ParseSettings(const ParsedArgs& parsed, ServeSettings* settings) {
  if (!parsed.positional.empty()) return UsageError("serve", "unexpected argument '" + parsed.positional[0] + "'");
  std::string error;
  const std::string* listen = parsed.Value("--listen");
  if (!serve::ParseListenAddress(listen ? *listen : std::string(serve::kDefaultListen), &settings->listen, &error)) {
    return UsageError("serve", error);
  }
  if (const std::string* directory = parsed.Value("--textfile")) {
    if (directory->empty()) return UsageError("serve", "--textfile needs a directory");
    if (listen != nullptr) return UsageError("serve", "--textfile writes a file instead of listening: drop --listen");
    settings->textfile_directory = *directory;
  }
  if (const std::string* value = parsed.Value("--interval")) {
    if (!ParseSeconds(*value, &settings->interval_seconds) || settings->interval_seconds < 0.1 ||
        settings->interval_seconds > 86400) {
      return UsageError("serve", "bad interval '" + *value + "': expected seconds from 0.1 to 86400");
    }
  }
  settings->once = parsed.Has("--once");
  if ((settings->once || parsed.Has("--interval")) && settings->textfile_directory.empty()) {
    return UsageError("serve", "--once and --interval go with --textfile");
  }
  if (const std::string* value = parsed.Value("--top")) {
    uint64_t top = 0;
    if (!ParseUnsigned(*value, &top) || top > 10000) {
      return UsageError("serve", "bad --top '" + *value + "': expected functions per server, 0 to 10000");
    }
    settings->exposition.top_functions = top;
  }
  if (const std::string* value = parsed.Value("--open-seconds")) {
    double& open = settings->exposition.open_alarm_seconds;
    if (!ParseSeconds(*value, &open) || open <= 0 || open > 86400 * 7) {
      return UsageError("serve", "bad --open-seconds '" + *value + "': expected seconds, more than 0 and up to a week");
    }
  }
  settings->all_users = parsed.Has("--all-users");
  return kExitOk;
}

int RunTextfile(const ServeSettings& settings) {
  serve::MetricsPage page(settings.all_users, settings.exposition, 0);
  std::string error;
  if (settings.once) {
    if (!serve::WriteTextfile(settings.textfile_directory, page.Render(), &error)) return Fail(kExitFailure, error);
    return kExitOk;
  }
  StopSignals stop;
  bool failing = false;
  do {
    // A full disk or a removed directory is reported once and retried: the
    // file comes back when the problem goes.
    bool written = serve::WriteTextfile(settings.textfile_directory, page.Render(), &error);
    if (!written && !failing) Warn(error + " (retrying every interval)");
    failing = !written;
  } while (!stop.Sleep(settings.interval_seconds));
  return kExitOk;
}

int RunHttp(const ServeSettings& settings) {
  std::string error;
  int listen_fd = serve::OpenListeningSocket(settings.listen, &error);
  if (listen_fd < 0) return Fail(kExitFailure, error);
  serve::MetricsPage page(settings.all_users, settings.exposition, kReuseCollectionMs);
  serve::HttpServer server(listen_fd, serve::BuildRoutes(&page));
  // The dashboard's charts need every window's scores, watched or not.
  server.SetPeriodicTask(kScoreRecordMs, [&page] { page.Refresh(); });

  // SIGINT and SIGTERM stay blocked (StopSignals) and arrive as a readable
  // descriptor in the server's poll set.
  StopSignals stop;
  sigset_t stop_set;
  sigemptyset(&stop_set);
  sigaddset(&stop_set, SIGINT);
  sigaddset(&stop_set, SIGTERM);
  int stop_fd = signalfd(-1, &stop_set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (stop_fd < 0) return Fail(kExitFailure, "cannot watch for SIGINT / SIGTERM (signalfd)");
  WriteOut("limpwatch serve: http://" + serve::BoundAddress(listen_fd) + "/metrics\n");
  FlushOut();
  server.Run(stop_fd);
  close(stop_fd);
  return FinishOutput(kExitOk);
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  ParsedArgs parsed;
  std::string error;
  if (!ParseArgs(args, kServeOptions, &parsed, &error)) return UsageError("serve", error);
  if (parsed.Has("--help")) {
    WriteOut(CommandHelp("serve"));
    return FinishOutput(kExitOk);
  }
  ServeSettings settings;
  if (int status = ParseSettings(parsed, &settings); status != kExitOk) return status;
  return settings.textfile_directory.empty() ? RunHttp(settings) : RunTextfile(settings);
}

}  // namespace limpwatch::cli
