// Function names by hash and by feature key, gathered from segments and
// recordings, so that root causes print names rather than numbers.
#ifndef LIMPWATCH_ANALYZER_NAME_BOOK_H_
#define LIMPWATCH_ANALYZER_NAME_BOOK_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/peer_summary.h"
#include "limpwatch/analyzer/tick_record.h"

namespace limpwatch::analyzer {

class NameBook {
 public:
  void Add(uint64_t name_hash, const std::string& name) {
    if (name_hash == 0 || name.empty()) return;
    names_.try_emplace(name_hash, name);
    keys_.try_emplace(FoldNameHash(name_hash), name_hash);
  }
  void Add(const std::vector<FunctionName>& names) {
    for (const auto& entry : names) Add(entry.name_hash, entry.name);
  }
  // 0 when unknown.
  uint64_t HashOfKey(uint32_t key) const {
    auto found = keys_.find(key);
    return found == keys_.end() ? 0 : found->second;
  }
  // The name, or "key:<hex>" when unknown.
  std::string NameOfKey(uint32_t key) const;
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<uint64_t, std::string> names_;
  std::unordered_map<uint32_t, uint64_t> keys_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_NAME_BOOK_H_
