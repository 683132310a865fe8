// The selection manifest: which functions LIMPWATCH_SELECT asks to trace.
//
// One rule per line; '#' starts a comment; blank lines are ignored:
//
//   include dbpf_*            a function name or glob (fnmatch), raw or demangled
//   exclude qlist_*
//   include file:dbpf-*.c     a source file (the STT_FILE symbol of a static function)
//   exclude object:libfoo.so  an object (executable or shared library), path or basename
//   gen_mutex_lock            a line without a keyword includes
//   request PINT_state_machine_*   marks request roots (below)
//
// The last matching rule wins. A function no rule matches is traced when the
// manifest has no include rule (a list of exclusions), and not traced
// otherwise (a list of what to trace).
//
// `request` rules take no part in that decision: they mark the traced
// functions that start a request (a state machine's entry, a job's
// callback), the roots of the sampled request flows (flow_recorder.h).
// Without any, a flow's root is a thread's outermost traced call.
#ifndef LIMPWATCH_RUNTIME_SRC_SELECTION_MANIFEST_H_
#define LIMPWATCH_RUNTIME_SRC_SELECTION_MANIFEST_H_

#include <string>
#include <string_view>
#include <vector>

namespace limpwatch::runtime {

enum class RuleTarget { kName, kFile, kObject };

struct SelectionRule {
  bool include = true;
  bool request = false;  // a `request` rule: marks, does not select
  RuleTarget target = RuleTarget::kName;
  std::string pattern;  // an fnmatch glob; a plain name matches exactly
};

struct SelectionManifest {
  std::vector<SelectionRule> rules;
  bool has_include = false;
  bool has_request = false;
};

// What is known about one function when its selection is decided.
struct FunctionFacts {
  std::string_view raw_name;
  std::string_view display_name;  // demangled; may equal raw_name
  std::string_view source_file;   // empty when unknown (global functions, stripped objects)
  std::string_view object_path;   // empty for named scopes
};

// Parses manifest text. On the first bad line returns false with *error set
// to "<origin>:<line>: <reason>".
bool ParseSelectionManifest(std::string_view text, const std::string& origin, SelectionManifest* out,
                            std::string* error);

// Reads and parses a manifest file; errors as above (or "<path>: <strerror>").
bool LoadSelectionManifest(const std::string& path, SelectionManifest* out, std::string* error);

// Whether the manifest selects a function with these facts.
bool IsSelected(const SelectionManifest& manifest, const FunctionFacts& facts);

// Whether a `request` rule matches a function with these facts.
bool IsRequestRoot(const SelectionManifest& manifest, const FunctionFacts& facts);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SELECTION_MANIFEST_H_
