#include "limpwatch/analyzer/name_book.h"

#include <cstdio>

namespace limpwatch::analyzer {

std::string NameBook::NameOfKey(uint32_t key) const {
  uint64_t hash = HashOfKey(key);
  if (hash != 0) {
    auto found = names_.find(hash);
    if (found != names_.end()) return found->second;
  }
  char text[24];
  std::snprintf(text, sizeof text, "key:%08x", key);
  return text;
}

}  // namespace limpwatch::analyzer
