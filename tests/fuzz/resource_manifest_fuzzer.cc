// Fuzz target for the resource manifest (LIMPWATCH_MANIFEST,
// analyzer/resource_manifest.h), read from a file as the analyzer reads it.
//
// Invariants, for every input:
//   - every line with something on it other than a comment becomes exactly
//     one rule or one problem; blank and comment lines become neither;
//   - every problem names the file and a line of it;
//   - limpwatch's own features keep their resource whatever the rules say;
//   - the first rule decides for a function it matches: a glob-free
//     pattern on the first line classifies its own text as that line says.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "limpwatch/analyzer/resource_manifest.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer::fuzzing {
namespace {

using limpwatch::fuzzing::Require;

void Check(bool condition, const char* invariant) { Require(condition, "resource manifest", invariant); }

// The lines as getline gives them, each cut at its comment.
std::vector<std::string> ContentLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    lines.push_back(line);
  }
  return lines;
}

// Whitespace as the stream extraction the manifest is read with sees it.
bool HasAWord(const std::string& line) {
  for (char c : line) {
    if (!std::isspace(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace
}  // namespace limpwatch::analyzer::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace limpwatch::analyzer;
  using namespace limpwatch::analyzer::fuzzing;
  static limpwatch::fuzzing::InputFile file;
  const std::string text = limpwatch::fuzzing::Text(std::span(data, size));
  const std::string& path = file.Write(text);

  ResourceManifest manifest;
  std::vector<std::string> problems;
  Check(manifest.Load(path, &problems), "a readable file loads");

  std::vector<std::string> lines = ContentLines(text);
  size_t content = 0;
  for (const std::string& line : lines) content += HasAWord(line);
  Check(manifest.size() + problems.size() == content, "each line with content is one rule or one problem");
  for (const std::string& problem : problems) {
    Check(limpwatch::fuzzing::NamesALine(problem, path, lines.size()), "a problem names the file and a line of it");
  }

  Check(manifest.Classify(kRunqueueWaitName) == limpwatch::shm::Resource::kCpu, "[waiting for a CPU] is cpu");
  Check(manifest.Classify(kLostPacketsName) == limpwatch::shm::Resource::kNetwork, "[lost packets] is network");
  Check(manifest.Classify(kFileSyncName) == limpwatch::shm::Resource::kDisk, "[file sync] is disk");
  Check(manifest.Classify(kMajorFaultsName) == limpwatch::shm::Resource::kMemory, "[major page faults] is memory");

  // The first line with content, when it is a well-formed rule.
  for (const std::string& line : lines) {
    if (!HasAWord(line)) continue;
    std::vector<std::string> words = Words(line);
    const std::string& pattern = words[0];
    bool glob_free = pattern.find_first_of("*?[\\") == std::string::npos && pattern.find('\0') == std::string::npos;
    bool builtin = pattern == kRunqueueWaitName || pattern == kCpuTimeName || pattern == kLostPacketsName ||
                   pattern == kRoundTripName || pattern == kFileSyncName || pattern == kMajorFaultsName;
    bool uncounted = words.size() == 3 && words[2] == "uncounted";
    if (!glob_free || builtin || (words.size() != 2 && !uncounted)) break;
    if (words[1] == "idle" && words.size() == 2) {
      Check(manifest.IsIdle(pattern), "an idle first rule makes its function idle");
      Check(manifest.Classify(pattern) == limpwatch::shm::Resource::kUnknown, "an idle function has no resource");
    } else if (auto resource = ParseResource(words[1])) {
      Check(manifest.Classify(pattern) == *resource, "the first rule gives its function's resource");
      Check(manifest.IsUncounted(pattern) == uncounted, "the first rule says whether its function is uncounted");
      Check(!manifest.IsIdle(pattern), "a function with a resource is not idle");
    }
    break;
  }
  return 0;
}
