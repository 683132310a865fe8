#include "folded_stacks.h"

#include <cstdint>
#include <map>

namespace limpwatch::cli {
namespace {

std::string Frame(std::string text) {
  for (char& c : text) {
    if (c == ';') c = ':';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

std::string RenderFoldedStacks(const RecordingScan& scan) {
  std::string out;
  for (const auto& [server, totals] : scan.servers) {
    // By frame text: two hashes of one name are one frame.
    std::map<std::string, uint64_t> stacks;
    for (const auto& [hash, function] : totals.functions) {
      if (function.samples > 0) stacks[Frame(FunctionLabel(scan.names, hash))] += function.samples;
    }
    std::string prefix = Frame(server) + ";";
    for (const auto& [frame, samples] : stacks) out += prefix + frame + " " + std::to_string(samples) + "\n";
  }
  return out;
}

}  // namespace limpwatch::cli
