// For tests that build a segment by hand: a function's symbol entry filled
// the way the runtime's registration and symbolizer leave it.
#ifndef LIMPWATCH_TESTS_SUPPORT_RESOLVED_SYMBOL_H_
#define LIMPWATCH_TESTS_SUPPORT_RESOLVED_SYMBOL_H_

#include <cstdint>
#include <string_view>

#include "limpwatch/shm/segment.h"

namespace limpwatch::testing {

// Symbol `id` resolved to `name` (cut to the entry's size) at `address`;
// the segment's function count grows to cover it.
void WriteResolvedSymbol(const shm::SegmentView& view, uint32_t id, std::string_view name, uint64_t address,
                         uint64_t name_hash);

}  // namespace limpwatch::testing

#endif  // LIMPWATCH_TESTS_SUPPORT_RESOLVED_SYMBOL_H_
