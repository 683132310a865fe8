#include "sampler/sample_attribution.h"

#include <cstring>
#include <mutex>

#include "limpwatch/shm/name_hash.h"
#include "symbolizer.h"

namespace limpwatch::runtime {
namespace {

constexpr size_t kMaxCachedAddresses = 1 << 16;

// The symbolizer names the main program "/proc/self/exe".
constexpr std::string_view kMainProgramPath = "/proc/self/exe";

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The machine's kernel symbols, loaded at most once per process and kept
// across fork (same kernel). Empty when /proc/kallsyms is unreadable.
const KernelSymbols& KernelSymbolsOnce() {
  static const KernelSymbols* symbols = new KernelSymbols(KernelSymbols::Load("/proc/kallsyms"));
  return *symbols;
}

template <typename Map, typename Value>
void Remember(Map* cache, uint64_t address, const Value& value) {
  if (cache->size() >= kMaxCachedAddresses) cache->clear();
  cache->emplace(address, value);
}

}  // namespace

SampleAttribution::SampleAttribution(const shm::SegmentView& view) { Retarget(view); }

void SampleAttribution::Retarget(const shm::SegmentView& view) {
  table_ = SampleTable(view);
  program_.assign(view.header()->program, strnlen(view.header()->program, sizeof view.header()->program));
  user_cache_.clear();
  kernel_cache_.clear();
  node_cache_.clear();
}

SampleAttribution::Lookup SampleAttribution::UserFunction(uint64_t address) {
  auto cached = user_cache_.find(address);
  if (cached != user_cache_.end()) return cached->second;
  ResolvedSymbol symbol;
  bool resolved;
  {
    std::lock_guard<std::mutex> lock(ProcessSymbolizer().mutex());
    resolved = ProcessSymbolizer().Resolve(address, &symbol);
  }
  Lookup lookup;
  if (resolved) {
    bool executable = symbol.image == kMainProgramPath;
    lookup.entry = table_.FindOrInsert(shm::FunctionNameHash(symbol.raw_name), symbol.display_name,
                                       executable ? std::string_view(program_) : Basename(symbol.image),
                                       executable ? shm::ImageKind::kExecutable : shm::ImageKind::kSharedLibrary);
    if (lookup.entry == nullptr) lookup.table_full = true;
  } else if (const std::string* name = vdso_.Find(address)) {
    lookup.entry = table_.FindOrInsert(shm::FunctionNameHash(*name), *name, kVdsoImage, shm::ImageKind::kSharedLibrary);
    if (lookup.entry == nullptr) lookup.table_full = true;
  }
  Remember(&user_cache_, address, lookup);
  return lookup;
}

SampleAttribution::Lookup SampleAttribution::KernelFunction(uint64_t address, bool node) {
  auto& cache = node ? node_cache_ : kernel_cache_;
  auto cached = cache.find(address);
  if (cached != cache.end()) return cached->second;
  Lookup lookup;
  KernelSymbol symbol;
  if (KernelSymbolsOnce().Find(address, &symbol)) {
    lookup.idle = node && IsIdleKernelFunction(symbol.name);
    if (!lookup.idle) {
      uint64_t hash = node ? shm::NodeKernelFunctionHash(symbol.name) : shm::FunctionNameHash(symbol.name);
      lookup.entry = table_.FindOrInsert(hash, symbol.name, symbol.image,
                                         node ? shm::ImageKind::kNodeKernel : shm::ImageKind::kKernel);
      if (lookup.entry == nullptr) lookup.table_full = true;
    }
  }
  Remember(&cache, address, lookup);
  return lookup;
}

void SampleAttribution::CountInto(const Lookup& lookup, std::atomic<uint64_t> shm::SampledFunction::*counter,
                                  bool count_unknown) {
  shm::SampleTableHeader& header = table_.header();
  if (lookup.entry != nullptr) {
    SampleTable::Add(lookup.entry->*counter, 1);
  } else if (lookup.table_full) {
    SampleTable::Add(header.samples_lost, 1);
  } else if (count_unknown) {
    SampleTable::Add(header.samples_unknown, 1);
  }
}

void SampleAttribution::CountProcessSample(uint64_t ip, bool in_kernel, uint64_t user_ip) {
  if (!table_.valid()) return;
  SampleTable::Add(table_.header().samples_total, 1);
  if (!in_kernel) {
    CountInto(UserFunction(ip), &shm::SampledFunction::samples, true);
    return;
  }
  CountInto(KernelFunction(ip, false), &shm::SampledFunction::samples, true);
  // The user function the kernel works for. Its own `samples` stay user-mode only.
  if (user_ip != 0) {
    Lookup user = UserFunction(user_ip);
    if (user.entry != nullptr) SampleTable::Add(user.entry->kernel_samples, 1);
  }
}

void SampleAttribution::CountNodeSample(uint64_t ip) {
  if (!table_.valid()) return;
  shm::SampleTableHeader& header = table_.header();
  SampleTable::Add(header.node_samples_total, 1);
  Lookup lookup = KernelFunction(ip, true);
  if (lookup.idle) {
    SampleTable::Add(header.node_samples_idle, 1);
    return;
  }
  // Unknown node samples are not counted apart: they are total - idle - the entries.
  CountInto(lookup, &shm::SampledFunction::samples, false);
}

void SampleAttribution::CountLost(uint64_t samples) {
  if (table_.valid() && samples != 0) SampleTable::Add(table_.header().samples_lost, samples);
}

}  // namespace limpwatch::runtime
