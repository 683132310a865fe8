// Which resource a function stands for: disk, network, CPU or memory.
//
// A manifest is a text file, one rule a line, '#' starts a comment:
//     <function name or glob> <disk|network|cpu|memory|idle> [uncounted]
// "idle" marks functions where threads wait for work (a job queue's wait,
// an event loop's epoll_wait): their time grows when the server has less to
// do, so they are never named as a root cause, and peers are compared
// without them (the work functions show the same shift, without the noise of
// how idle time splits among waiting threads).
// "uncounted" after a resource marks a function whose number of calls
// follows how its input arrives rather than how much work there is (a loop
// that reads a message in as many pieces as the network delivers): peers are
// compared without its call count, and with its time and samples as usual.
// The first matching rule wins. The PVFS manifest (pvfs-patches/) maps
// trove/dbpf calls to disk, BMI calls to network, and so on; the test-bed
// ships its own.
#ifndef LIMPWATCH_ANALYZER_RESOURCE_MANIFEST_H_
#define LIMPWATCH_ANALYZER_RESOURCE_MANIFEST_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "limpwatch/shm/layout.h"

namespace limpwatch::analyzer {

const char* ResourceName(shm::Resource resource);
std::optional<shm::Resource> ParseResource(std::string_view name);

class ResourceManifest {
 public:
  // Adds the rules of a manifest file; malformed lines are reported in
  // *problems ("file:line: ...") and skipped. False if it cannot be read.
  bool Load(const std::string& path, std::vector<std::string>* problems);
  void AddRule(const std::string& pattern, shm::Resource resource, bool uncounted = false);
  void AddIdleRule(const std::string& pattern);

  // The resource of the first rule matching `function`, or kUnknown (also
  // for idle functions).
  shm::Resource Classify(const std::string& function) const;
  // True when the first rule matching `function` marks it idle.
  bool IsIdle(const std::string& function) const;
  bool has_idle_rules() const { return has_idle_rules_; }
  // True when the first rule matching `function` marks it uncounted.
  bool IsUncounted(const std::string& function) const;
  bool has_uncounted_rules() const { return has_uncounted_rules_; }
  size_t size() const { return rules_.size(); }

 private:
  struct Rule {
    std::string pattern;
    shm::Resource resource;
    bool idle;
    bool uncounted;
  };
  const Rule* FirstMatch(const std::string& function) const;
  std::vector<Rule> rules_;
  bool has_idle_rules_ = false;
  bool has_uncounted_rules_ = false;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_RESOURCE_MANIFEST_H_
