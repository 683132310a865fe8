// The identity of a function across processes: a 64-bit hash of its raw
// (mangled) symbol name. Addresses differ between processes (ASLR); the name
// does not, so two servers built from the same sources agree on every key.
#ifndef LIMPWATCH_SHM_NAME_HASH_H_
#define LIMPWATCH_SHM_NAME_HASH_H_

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace limpwatch::shm {

// FNV-1a, 64-bit. Never returns 0, which means "no name" in the segment.
constexpr uint64_t FunctionNameHash(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : name) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash == 0 ? 1 : hash;
}

// The key of a kernel function in the node-wide kernel profile
// (ImageKind::kNodeKernel): the hash of "[node]" followed by the name, so the
// node's samples of `tcp_v4_rcv` and this process's own never share an entry.
inline constexpr std::string_view kNodeKernelKeyPrefix = "[node]";
constexpr uint64_t NodeKernelFunctionHash(std::string_view name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (std::string_view part : {kNodeKernelKeyPrefix, name}) {
    for (char c : part) {
      hash ^= static_cast<uint8_t>(c);
      hash *= 0x100000001b3ull;
    }
  }
  return hash == 0 ? 1 : hash;
}

static_assert(FunctionNameHash("") == 0xcbf29ce484222325ull);
static_assert(NodeKernelFunctionHash("tcp_v4_rcv") == FunctionNameHash("[node]tcp_v4_rcv"));
static_assert(FunctionNameHash("a") == 0xaf63dc4c8601ec8cull);

}  // namespace limpwatch::shm

#endif  // LIMPWATCH_SHM_NAME_HASH_H_
