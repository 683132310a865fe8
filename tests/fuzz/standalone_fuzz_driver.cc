// A mutation fuzzer for machines without clang's libFuzzer: it feeds
// LLVMFuzzerTestOneInput (the same target) with random mutations of the seed
// corpus for a fixed time. No coverage feedback, so it relies on the seeds
// being valid datagrams and on mutations that respect their structure
// (length fields, counts, tags re-signed by the target itself).
//
// Takes libFuzzer's spelling of what it needs, so the CTest commands are the
// same for both engines: -max_total_time=<seconds> [-seed=<n>]
// [-timeout=<seconds>] [-artifact_prefix=<path prefix>] <corpus dirs...>.
// Other -flags are ignored. When an input crashes the target (a trap or an
// abort: a broken invariant or a sanitizer report), it is written to
// <prefix>crash-standalone before the process dies, as libFuzzer would; one
// that runs longer than the timeout (default 1200 s, libFuzzer's) to
// <prefix>timeout-standalone. Given files rather than directories, it runs
// each once and stops, as libFuzzer does: that is how kept crash inputs are
// replayed.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

// What the crash handler needs, set before it can run.
const Bytes* current_input = nullptr;
std::string crash_path = "crash-standalone";
std::string timeout_path = "timeout-standalone";

void SaveInputAndDie(int signal_number) {
  // Only async-signal-safe calls here.
  if (current_input != nullptr) {
    const std::string& path = signal_number == SIGALRM ? timeout_path : crash_path;
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, current_input->data(), current_input->size());
      (void)ignored;
      ::close(fd);
    }
    static const char kCrash[] = "standalone fuzz driver: crashing input saved\n";
    static const char kTimeout[] = "standalone fuzz driver: input ran past the timeout, saved\n";
    bool timeout = signal_number == SIGALRM;
    ssize_t ignored = ::write(2, timeout ? kTimeout : kCrash, timeout ? sizeof(kTimeout) - 1 : sizeof(kCrash) - 1);
    (void)ignored;
  }
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

Bytes ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<Bytes> LoadCorpus(const std::vector<std::string>& directories) {
  std::vector<Bytes> corpus;
  for (const auto& directory : directories) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
      if (entry.is_regular_file()) corpus.push_back(ReadFile(entry.path()));
    }
  }
  return corpus;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : random_(seed) {}

  void Mutate(Bytes* bytes, const std::vector<Bytes>& corpus) {
    int rounds = 1 + static_cast<int>(Below(4));
    for (int i = 0; i < rounds; ++i) MutateOnce(bytes, corpus);
  }

 private:
  uint64_t Below(uint64_t bound) { return bound == 0 ? 0 : random_() % bound; }

  void MutateOnce(Bytes* bytes, const std::vector<Bytes>& corpus) {
    // Datagram fields are mostly 1, 2 and 4 bytes wide: values that sit on
    // the edges of their checks.
    static const uint32_t kInteresting[] = {0,    1,      2,      3,      6,          16,         46,     47,
                                            48,   71,     72,     73,     127,        128,        255,    256,
                                            1400, 1452,   1453,   0x7F7F, 0x7F80,     0x7FC0,     0xFF80, 0x7FFF,
                                            0x8000, 0xFFFF, 0x10000, 0x7FC00000, 0x7F800000, 0xFFFFFFFF};
    switch (Below(bytes->empty() ? 3 : 9)) {
      case 0: {  // insert random bytes
        size_t at = Below(bytes->size() + 1);
        size_t count = 1 + Below(8);
        Bytes extra(count);
        for (auto& byte : extra) byte = static_cast<uint8_t>(random_());
        bytes->insert(bytes->begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
        break;
      }
      case 1: {  // splice a piece of another seed in
        const Bytes& other = corpus[Below(corpus.size())];
        if (other.empty()) break;
        size_t from = Below(other.size());
        size_t count = 1 + Below(other.size() - from);
        size_t at = Below(bytes->size() + 1);
        bytes->insert(bytes->begin() + static_cast<std::ptrdiff_t>(at), other.begin() + static_cast<std::ptrdiff_t>(from),
                      other.begin() + static_cast<std::ptrdiff_t>(from + count));
        break;
      }
      case 2:  // start over from another seed
        *bytes = corpus[Below(corpus.size())];
        break;
      case 3:  // flip a bit
        (*bytes)[Below(bytes->size())] ^= static_cast<uint8_t>(1u << Below(8));
        break;
      case 4:  // a random byte
        (*bytes)[Below(bytes->size())] = static_cast<uint8_t>(random_());
        break;
      case 5:  // truncate
        bytes->resize(Below(bytes->size()));
        break;
      case 6: {  // erase a range
        size_t at = Below(bytes->size());
        size_t count = 1 + Below(std::min<size_t>(16, bytes->size() - at));
        bytes->erase(bytes->begin() + static_cast<std::ptrdiff_t>(at),
                     bytes->begin() + static_cast<std::ptrdiff_t>(at + count));
        break;
      }
      default: {  // an interesting little-endian value of 1, 2 or 4 bytes
        uint32_t value = kInteresting[Below(std::size(kInteresting))];
        size_t width = size_t{1} << Below(3);
        size_t at = Below(bytes->size());
        for (size_t i = 0; i < width && at + i < bytes->size(); ++i) {
          (*bytes)[at + i] = static_cast<uint8_t>(value >> (8 * i));
        }
        break;
      }
    }
  }

  std::mt19937_64 random_;
};

// Runs `input` with the timeout armed.
void Run(const Bytes& input, unsigned timeout_seconds) {
  current_input = &input;
  ::alarm(timeout_seconds);
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 20;
  unsigned timeout_seconds = 1200;
  uint64_t seed = std::random_device{}();
  std::vector<std::string> directories;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument.rfind("-max_total_time=", 0) == 0) {
      seconds = std::stod(argument.substr(16));
    } else if (argument.rfind("-artifact_prefix=", 0) == 0) {
      crash_path = argument.substr(17) + "crash-standalone";
      timeout_path = argument.substr(17) + "timeout-standalone";
    } else if (argument.rfind("-seed=", 0) == 0) {
      seed = std::stoull(argument.substr(6));
    } else if (argument.rfind("-timeout=", 0) == 0) {
      timeout_seconds = static_cast<unsigned>(std::stoul(argument.substr(9)));
    } else if (argument.rfind("-", 0) != 0) {
      (std::filesystem::is_directory(argument) ? directories : files).push_back(argument);
    }
  }
  for (int signal_number : {SIGILL, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGALRM}) ::signal(signal_number, SaveInputAndDie);
  if (!files.empty()) {
    for (const std::string& file : files) {
      std::printf("standalone fuzz driver: running %s\n", file.c_str());
      std::fflush(stdout);
      Bytes input = ReadFile(file);
      Run(input, timeout_seconds);
    }
    std::printf("standalone fuzz driver: %zu inputs run, no invariant broken\n", files.size());
    return 0;
  }
  std::vector<Bytes> corpus = LoadCorpus(directories);
  if (corpus.empty()) {
    std::fprintf(stderr, "standalone fuzz driver: no seed inputs in the directories given\n");
    return 2;
  }
  std::printf("standalone fuzz driver: %zu seeds, %.0f s, seed %llu\n", corpus.size(), seconds,
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);

  for (const Bytes& input : corpus) Run(input, timeout_seconds);
  Mutator mutator(seed);
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + std::chrono::duration<double>(seconds);
  uint64_t executions = corpus.size();
  Bytes input;
  while (true) {
    for (int batch = 0; batch < 256; ++batch) {
      input = corpus[executions % corpus.size()];
      mutator.Mutate(&input, corpus);
      Run(input, timeout_seconds);
      ++executions;
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("standalone fuzz driver: %llu executions in %.1f s (%.0f/s), no invariant broken\n",
              static_cast<unsigned long long>(executions), elapsed, executions / elapsed);
  return 0;
}
