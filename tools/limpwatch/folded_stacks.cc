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

std::string RenderFoldedFlowStacks(const RecordingScan& scan) {
  std::string out;
  for (const auto& [server, totals] : scan.servers) {
    std::map<std::string, double> stacks;  // by text: two hashes of one name are one frame
    for (const auto& [calls, self_ns] : totals.flow_stack_self_ns) {
      std::string text = Frame(server);
      for (uint64_t hash : calls) text += ";" + Frame(FunctionLabel(scan.names, hash));
      stacks[text] += self_ns;
    }
    for (const auto& [text, self_ns] : stacks) {
      auto microseconds = static_cast<uint64_t>(self_ns / 1000 + 0.5);
      if (microseconds > 0) out += text + " " + std::to_string(microseconds) + "\n";
    }
  }
  return out;
}

}  // namespace limpwatch::cli
