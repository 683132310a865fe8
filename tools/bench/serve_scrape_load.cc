// serve_scrape_load: N concurrent scrapers of an HTTP endpoint on loopback,
// each on a connection of its own (kept alive, as Prometheus keeps it),
// until told to stop (SIGINT / SIGTERM) or for --seconds. With --interval
// S every scraper scrapes at the same moments, each S seconds (N scrapes
// at once, as N Prometheus servers would); with --interval 0 back to back.
// Prints one line: scrapes, failures, bytes, and the latency median and
// maximum. The load of serve_overhead.sh.
//
//   serve_scrape_load --port PORT [--clients 100] [--interval 1] [--seconds S] [--path /metrics]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include "serve/loopback_client.h"

namespace {

std::atomic<bool> stop_requested{false};

void RequestStop(int) { stop_requested.store(true); }

int Connect(uint16_t port) { return limpwatch::testing::ConnectLoopback(port, 10); }

// One scrape on `fd`: true when a complete 200 response came back.
bool Scrape(int fd, const std::string& request, uint64_t* bytes) {
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) != ssize_t(request.size())) return false;
  std::string data;
  char buffer[65536];
  size_t head_end = std::string::npos;
  size_t length = 0;
  for (;;) {
    if (head_end == std::string::npos && (head_end = data.find("\r\n\r\n")) != std::string::npos) {
      size_t field = data.find("Content-Length: ");
      if (field == std::string::npos || field > head_end) return false;
      length = std::strtoull(data.c_str() + field + 16, nullptr, 10);
    }
    if (head_end != std::string::npos && data.size() >= head_end + 4 + length) break;
    ssize_t count = recv(fd, buffer, sizeof buffer, 0);
    if (count <= 0) return false;
    data.append(buffer, size_t(count));
  }
  *bytes += data.size();
  return data.compare(0, 12, "HTTP/1.1 200") == 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint16_t port = 0;
  int clients = 100;
  double seconds = 0;
  double interval = 1;
  std::string path = "/metrics";
  for (int index = 1; index + 1 < argc; index += 2) {
    std::string option = argv[index];
    if (option == "--port") port = static_cast<uint16_t>(std::atoi(argv[index + 1]));
    else if (option == "--clients") clients = std::atoi(argv[index + 1]);
    else if (option == "--seconds") seconds = std::atof(argv[index + 1]);
    else if (option == "--interval") interval = std::atof(argv[index + 1]);
    else if (option == "--path") path = argv[index + 1];
    else {
      std::fprintf(stderr, "serve_scrape_load: unknown option %s\n", option.c_str());
      return 2;
    }
  }
  if (port == 0 || clients < 1 || interval < 0) {
    std::fprintf(stderr, "usage: serve_scrape_load --port PORT [--clients 100] [--interval 1] [--seconds S] "
                         "[--path /metrics]\n");
    return 2;
  }
  signal(SIGINT, RequestStop);
  signal(SIGTERM, RequestStop);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  auto started = std::chrono::steady_clock::now();
  auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(interval));
  auto deadline = started + std::chrono::duration<double>(seconds > 0 ? seconds : 1e9);
  std::atomic<uint64_t> scrapes{0}, failures{0}, bytes{0};
  std::mutex latency_mutex;
  std::vector<double> latencies_ms;
  std::vector<std::thread> threads;
  for (int client = 0; client < clients; ++client) {
    threads.emplace_back([&] {
      std::vector<double> mine;
      uint64_t received = 0;
      int fd = -1;
      auto next = started;
      while (!stop_requested.load() && std::chrono::steady_clock::now() < deadline) {
        if (interval > 0) {
          // Every scraper wakes at the same period boundaries.
          std::this_thread::sleep_until(next);
          next += period;
          if (stop_requested.load() || std::chrono::steady_clock::now() >= deadline) break;
        }
        if (fd < 0 && (fd = Connect(port)) < 0) {
          ++failures;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          continue;
        }
        auto begun = std::chrono::steady_clock::now();
        if (Scrape(fd, request, &received)) {
          ++scrapes;
          mine.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begun).count());
        } else {
          ++failures;
          close(fd);
          fd = -1;
        }
      }
      if (fd >= 0) close(fd);
      bytes += received;
      std::lock_guard<std::mutex> lock(latency_mutex);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& thread : threads) thread.join();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  double median = latencies_ms.empty() ? 0 : latencies_ms[latencies_ms.size() / 2];
  double worst = latencies_ms.empty() ? 0 : latencies_ms.back();
  std::printf("clients %d interval %.3g seconds %.1f scrapes %llu failures %llu scrapes_per_s %.1f mb %.1f "
              "latency_median_ms %.2f latency_max_ms %.2f\n",
              clients, interval, elapsed, static_cast<unsigned long long>(scrapes.load()),
              static_cast<unsigned long long>(failures.load()), double(scrapes.load()) / elapsed,
              double(bytes.load()) / 1e6, median, worst);
  return 0;
}
