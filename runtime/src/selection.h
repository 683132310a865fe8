// The active selection of traced functions (LIMPWATCH_SELECT).
//
// A manifest (selection_manifest.h) is compiled, off the hot path, into an
// immutable Selection: the entry addresses of every function symbol of every
// loaded object whose decision differs from the manifest's default. Deciding
// a function at registration is then a binary search, with no lock, no
// allocation and no system call, on whichever thread first calls it.
//
// Selections are published through one atomic pointer and never freed (a
// registering thread may still read the previous one); each reload keeps a
// few kilobytes. The service task re-reads the manifest when its mtime, size
// or inode changes, or when an object is loaded, and flips the index entries
// of already registered functions (function_registry.h).
#ifndef LIMPWATCH_RUNTIME_SRC_SELECTION_H_
#define LIMPWATCH_RUNTIME_SRC_SELECTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "selection_manifest.h"

namespace limpwatch::runtime {

class Selection {
 public:
  // Scans the symbol tables of every loaded object. Runs off the hot path.
  static std::unique_ptr<Selection> Build(SelectionManifest manifest);

  // The decision for a function entered at `address`. Safe on any thread:
  // no lock, no allocation.
  bool SelectsAddress(uint64_t address) const;

  // The decision for a named scope (it has a name but no symbol).
  bool SelectsScopeName(const char* name) const;

  // Whether `address` lies in executable code of an object this selection
  // scanned (a named scope's handle lies in data, outside).
  bool CoversCode(uint64_t address) const;

  size_t exceptions() const { return exceptions_.size(); }

  // Request roots (`request` rules): by entry address, and for named scopes by name.
  bool has_request_rules() const { return manifest_.has_request; }
  bool MarksRequest(uint64_t address) const;
  bool MarksRequestScopeName(const char* name) const;

 private:
  SelectionManifest manifest_;
  bool default_selected_ = true;
  std::vector<uint64_t> exceptions_;                          // sorted, decision != default
  std::vector<uint64_t> request_roots_;                       // sorted entry addresses
  std::vector<std::pair<uint64_t, uint64_t>> code_ranges_;  // sorted [start, end) of executable segments
};

// The selection in force, or null when everything is traced. Sequentially
// consistent, so a registration that publishes its entry and then re-reads
// this pointer cannot miss a concurrent re-selection (see RegisterFunction).
const Selection* ActiveSelection();

// Held by a thread that decides under ActiveSelection() off the service
// thread (a function's registration). A selection replaced while any such
// reader is inside is retired, and freed by a later publication that finds no
// reader inside: a reader counts itself before it loads the pointer, so once
// the count is seen at zero after a swap, no one can still hold the old one.
class SelectionReadGuard {
 public:
  SelectionReadGuard();
  ~SelectionReadGuard();
  SelectionReadGuard(const SelectionReadGuard&) = delete;
  SelectionReadGuard& operator=(const SelectionReadGuard&) = delete;
};

// Selections replaced and not yet freed (for the tests).
size_t RetiredSelections();

// The decision for a code address under `selection` (null: selected).
inline bool SelectsAddress(const Selection* selection, uint64_t address) {
  return selection == nullptr || selection->SelectsAddress(address);
}

// Loads LIMPWATCH_SELECT now. Called once at start-up; later changes are
// picked up by the service task.
void StartSelection();

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SELECTION_H_
