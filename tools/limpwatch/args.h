// Command-line option parsing shared by the sub-commands.
//
// Accepted forms: "--delay 2", "--delay=2", "-d 2", "-d2", flags like
// "--json", and "--" to end the options. Anything else starting with '-' is an
// error, so a typo never silently becomes a segment name.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_ARGS_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_ARGS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace limpwatch::cli {

struct OptionSpec {
  std::string_view name;        // canonical long form, e.g. "--delay"
  std::string_view short_name;  // e.g. "-d", or empty
  bool takes_value = false;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  // Canonical name -> value ("" for flags). A repeated option keeps its last value.
  std::map<std::string, std::string, std::less<>> options;

  bool Has(std::string_view name) const { return options.find(name) != options.end(); }
  // The value given for `name`, or null when absent.
  const std::string* Value(std::string_view name) const;
};

// Parses the words after a command name. Returns false with a one-line *error
// on an unknown option or a missing value.
bool ParseArgs(const std::vector<std::string>& args, std::span<const OptionSpec> specs, ParsedArgs* out,
               std::string* error);

// A plain decimal number of seconds ("1", "0.25", "2e-1"); false for
// anything else, including trailing junk and non-finite values.
bool ParseSeconds(std::string_view text, double* out);

// Decimal digits only, within uint64_t; false otherwise (no sign, no spaces).
bool ParseUnsigned(std::string_view text, uint64_t* out);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_ARGS_H_
