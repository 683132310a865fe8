// C++ names in their source form, for matching selection rules and for the
// names the segment shows.
#ifndef LIMPWATCH_RUNTIME_SRC_DEMANGLER_H_
#define LIMPWATCH_RUNTIME_SRC_DEMANGLER_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace limpwatch::runtime {

// Demangles into buffers kept from call to call: a selection is rebuilt by
// visiting every function of every loaded object, and the copies in and out
// of __cxa_demangle were allocations per C++ symbol on top of its own.
class Demangler {
 public:
  Demangler() = default;
  Demangler(const Demangler&) = delete;
  Demangler& operator=(const Demangler&) = delete;
  ~Demangler();

  // The demangled form of `raw`; `raw` itself when it is not a mangled C++
  // name or does not demangle. Valid until the next call.
  std::string_view operator()(std::string_view raw);

 private:
  std::string mangled_;  // a NUL-terminated copy, as __cxa_demangle wants
  char* buffer_ = nullptr;
  size_t capacity_ = 0;
};

// One name, for callers that keep the result.
std::string Demangle(std::string_view raw);

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_DEMANGLER_H_
