#include "limpwatch/analyzer/resource_manifest.h"

#include "limpwatch/analyzer/tick_record.h"

#include <fnmatch.h>

#include <fstream>
#include <sstream>

namespace limpwatch::analyzer {

const char* ResourceName(shm::Resource resource) {
  switch (resource) {
    case shm::Resource::kDisk: return "disk";
    case shm::Resource::kNetwork: return "network";
    case shm::Resource::kCpu: return "cpu";
    case shm::Resource::kMemory: return "memory";
    case shm::Resource::kProcess: return "process";
    case shm::Resource::kUnknown: break;
  }
  return "unknown";
}

std::optional<shm::Resource> ParseResource(std::string_view name) {
  if (name == "disk") return shm::Resource::kDisk;
  if (name == "network") return shm::Resource::kNetwork;
  if (name == "cpu") return shm::Resource::kCpu;
  if (name == "memory") return shm::Resource::kMemory;
  return std::nullopt;
}

void ResourceManifest::AddRule(const std::string& pattern, shm::Resource resource, bool uncounted) {
  rules_.push_back({pattern, resource, false, uncounted});
  has_uncounted_rules_ = has_uncounted_rules_ || uncounted;
}

void ResourceManifest::AddIdleRule(const std::string& pattern) {
  rules_.push_back({pattern, shm::Resource::kUnknown, true, false});
  has_idle_rules_ = true;
}

bool ResourceManifest::Load(const std::string& path, std::vector<std::string>* problems) {
  std::ifstream file(path);
  if (!file) return false;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    std::istringstream fields(line);
    std::string pattern, resource_name, mark, extra;
    if (!(fields >> pattern)) continue;
    std::string where = path + ":" + std::to_string(number) + ": ";
    if (!(fields >> resource_name) || ((fields >> mark) && mark != "uncounted") || (fields >> extra)) {
      problems->push_back(where + "expected '<function or glob> <disk|network|cpu|memory|idle> [uncounted]'");
      continue;
    }
    if (resource_name == "idle") {
      if (!mark.empty()) {
        problems->push_back(where + "an idle function is left out of every comparison; 'uncounted' adds nothing");
        continue;
      }
      AddIdleRule(pattern);
      continue;
    }
    auto resource = ParseResource(resource_name);
    if (!resource) {
      problems->push_back(where + "unknown resource '" + resource_name + "'");
      continue;
    }
    AddRule(pattern, *resource, !mark.empty());
  }
  return true;
}

const ResourceManifest::Rule* ResourceManifest::FirstMatch(const std::string& function) const {
  for (const Rule& rule : rules_) {
    if (fnmatch(rule.pattern.c_str(), function.c_str(), 0) == 0) return &rule;
  }
  return nullptr;
}

shm::Resource ResourceManifest::Classify(const std::string& function) const {
  if (function == kRunqueueWaitName || function == kCpuTimeName) {
    return shm::Resource::kCpu;  // limpwatch's own features, whatever the rules say
  }
  if (function == kLostPacketsName || function == kRoundTripName) return shm::Resource::kNetwork;
  if (function == kFileSyncName) return shm::Resource::kDisk;
  if (function == kMajorFaultsName) return shm::Resource::kMemory;
  const Rule* rule = FirstMatch(function);
  return rule == nullptr ? shm::Resource::kUnknown : rule->resource;
}

bool ResourceManifest::IsIdle(const std::string& function) const {
  const Rule* rule = FirstMatch(function);
  return rule != nullptr && rule->idle;
}

bool ResourceManifest::IsUncounted(const std::string& function) const {
  const Rule* rule = FirstMatch(function);
  return rule != nullptr && rule->uncounted;
}

}  // namespace limpwatch::analyzer
