#include "selection.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "demangler.h"
#include "function_registry.h"
#include "patching/call_site_patcher.h"
#include "patching/patcher.h"
#include "process.h"
#include "selection_symbols.h"
#include "service_tasks.h"

namespace limpwatch::runtime {
namespace {

constexpr uint32_t kManifestCheckPeriodMs = 200;

constinit std::atomic<const Selection*> g_active{nullptr};
constinit std::atomic<uint32_t> g_selection_readers{0};
// Replaced selections a reader may still hold; only the publishing thread
// (start-up, then the service thread) touches the list.
std::vector<std::unique_ptr<const Selection>>* g_retired = nullptr;

// What identifies one version of the manifest file.
struct FileStamp {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  timespec modified{};
  bool operator==(const FileStamp& other) const {
    return exists == other.exists && device == other.device && inode == other.inode && size == other.size &&
           modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec;
  }
};

// Service-thread state (and the start-up constructor, before that thread runs).
struct Watch {
  std::string path;  // LIMPWATCH_SELECT, empty when unset
  FileStamp stamp;
  uint64_t object_generation = 0;
  SelectionManifest last_good;
  bool have_good = false;
};
Watch* g_watch = nullptr;

FileStamp StampOf(const std::string& path) {
  FileStamp stamp;
  struct stat status{};
  if (stat(path.c_str(), &status) != 0) return stamp;
  stamp.exists = true;
  stamp.device = status.st_dev;
  stamp.inode = status.st_ino;
  stamp.size = status.st_size;
  stamp.modified = status.st_mtim;
  return stamp;
}

bool Ready() {
  return g_process.phase.load(std::memory_order_acquire) == static_cast<uint32_t>(ProcessPhase::kReady);
}

void Retire(const Selection* replaced) {
  if (g_retired == nullptr) g_retired = new std::vector<std::unique_ptr<const Selection>>();
  if (replaced != nullptr) g_retired->emplace_back(replaced);
  // Sequentially consistent with the store that replaced it and with the
  // readers' count-then-load: zero here means no reader holds a retired one.
  if (g_selection_readers.load(std::memory_order_seq_cst) == 0) g_retired->clear();
}

void Publish(std::unique_ptr<Selection> selection) {
  Retire(g_active.exchange(selection.release(), std::memory_order_seq_cst));
  if (!Ready()) return;
  uint64_t unselected = ApplySelectionToIndex();
  g_process.header->counters.functions_unselected.store(unselected, std::memory_order_relaxed);
  // After the index: a newly deselected function's patched entry already
  // returns at once while its sled is being unpatched.
  patching::ApplySelectionToPatches();
  patching::ApplySelectionToCallSites();
  // Counted last: whoever waits for it (`limpwatch select`, a deployment
  // script, the tests) may rely on the new selection being what runs.
  g_process.header->counters.selections_applied.fetch_add(1, std::memory_order_release);
}

void CountError() {
  if (Ready()) g_process.header->counters.selection_errors.fetch_add(1, std::memory_order_relaxed);
}

// Re-reads the manifest when it changed and rebuilds the selection when the
// manifest or the set of loaded objects changed.
void Refresh(Watch& watch, bool starting) {
  FileStamp stamp = StampOf(watch.path);
  uint64_t generation = LoadedObjectGeneration();
  bool manifest_changed = starting || !(stamp == watch.stamp);
  if (!manifest_changed && generation == watch.object_generation) return;
  watch.stamp = stamp;
  watch.object_generation = generation;
  if (manifest_changed) {
    SelectionManifest manifest;
    std::string error;
    if (!LoadSelectionManifest(watch.path, &manifest, &error)) {
      LogLine(error + (watch.have_good ? "; keeping the previous selection" : "; tracing every function"));
      CountError();
      return;
    }
    watch.last_good = std::move(manifest);
    watch.have_good = true;
  }
  if (!watch.have_good) return;
  Publish(Selection::Build(watch.last_good));
}

void SelectionTask(const shm::SegmentView&, uint64_t) {
  if (g_watch != nullptr) Refresh(*g_watch, false);
}

}  // namespace

std::unique_ptr<Selection> Selection::Build(SelectionManifest manifest) {
  auto selection = std::unique_ptr<Selection>(new Selection());
  selection->default_selected_ = !manifest.has_include;
  Demangler demangle;
  for (const LoadedObject& object : ListLoadedObjects()) {
    selection->code_ranges_.insert(selection->code_ranges_.end(), object.code_ranges.begin(),
                                   object.code_ranges.end());
    ForEachFunctionSymbol(object.path, [&](const FunctionSymbol& symbol) {
      FunctionFacts facts{symbol.name, demangle(symbol.name), symbol.source_file, object.path};
      if (IsSelected(manifest, facts) != selection->default_selected_) {
        selection->exceptions_.push_back(object.bias + symbol.file_address);
      }
      if (IsRequestRoot(manifest, facts)) selection->request_roots_.push_back(object.bias + symbol.file_address);
    });
  }
  std::sort(selection->exceptions_.begin(), selection->exceptions_.end());
  selection->exceptions_.erase(std::unique(selection->exceptions_.begin(), selection->exceptions_.end()),
                               selection->exceptions_.end());
  std::sort(selection->code_ranges_.begin(), selection->code_ranges_.end());
  std::sort(selection->request_roots_.begin(), selection->request_roots_.end());
  selection->manifest_ = std::move(manifest);
  return selection;
}

bool Selection::SelectsAddress(uint64_t address) const {
  bool exception = std::binary_search(exceptions_.begin(), exceptions_.end(), address);
  return exception != default_selected_;
}

bool Selection::MarksRequest(uint64_t address) const {
  return std::binary_search(request_roots_.begin(), request_roots_.end(), address);
}

bool Selection::MarksRequestScopeName(const char* name) const {
  return IsRequestRoot(manifest_, FunctionFacts{name, name, {}, {}});
}

bool Selection::SelectsScopeName(const char* name) const {
  return IsSelected(manifest_, FunctionFacts{name, name, {}, {}});
}

bool Selection::CoversCode(uint64_t address) const {
  auto after = std::upper_bound(code_ranges_.begin(), code_ranges_.end(), std::make_pair(address, UINT64_MAX));
  return after != code_ranges_.begin() && address < std::prev(after)->second;
}

const Selection* ActiveSelection() { return g_active.load(std::memory_order_seq_cst); }

SelectionReadGuard::SelectionReadGuard() { g_selection_readers.fetch_add(1, std::memory_order_seq_cst); }
SelectionReadGuard::~SelectionReadGuard() { g_selection_readers.fetch_sub(1, std::memory_order_seq_cst); }

size_t RetiredSelections() { return g_retired == nullptr ? 0 : g_retired->size(); }

void StartSelection() {
  const char* path = std::getenv("LIMPWATCH_SELECT");
  if (path == nullptr || path[0] == '\0' || g_watch != nullptr) return;
  g_watch = new Watch();
  g_watch->path = path;
  Refresh(*g_watch, true);
  RegisterServiceTask("selection", SelectionTask, kManifestCheckPeriodMs);
}

// After the runtime's own start-up (priority 101), before the program's
// constructors: their calls are decided by the manifest too.
[[gnu::constructor(102)]] void StartSelectionAtLoad() {
  OwnWorkSection own_work;
  StartSelection();
}

}  // namespace limpwatch::runtime
