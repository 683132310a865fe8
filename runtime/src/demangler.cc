#include "demangler.h"

#include <cxxabi.h>

#include <cstdlib>

namespace limpwatch::runtime {

Demangler::~Demangler() { std::free(buffer_); }

std::string_view Demangler::operator()(std::string_view raw) {
  if (raw.substr(0, 2) != "_Z") return raw;
  mangled_.assign(raw);
  int status = 0;
  size_t length = capacity_;
  // Writes into buffer_ when the name fits; otherwise frees it and returns a
  // new one, with its size in `length`. A name that does not demangle leaves
  // buffer_ as it was.
  char* demangled = abi::__cxa_demangle(mangled_.c_str(), buffer_, &length, &status);
  if (demangled == nullptr || status != 0) return raw;
  buffer_ = demangled;
  capacity_ = length;
  return std::string_view(buffer_);
}

std::string Demangle(std::string_view raw) {
  Demangler demangler;
  return std::string(demangler(raw));
}

}  // namespace limpwatch::runtime
