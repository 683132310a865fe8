// The help texts, in one place so `help`, `<command> --help` and the one-line
// usage errors never disagree.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_USAGE_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_USAGE_H_

#include <string>
#include <string_view>

namespace limpwatch::cli {

// The full help of every command.
std::string FullHelp();

// The help of one command, or empty for an unknown command.
std::string CommandHelp(std::string_view command);

// One-line synopsis, e.g. "limpwatch dump NAME [--json]"; empty if unknown.
std::string_view CommandSynopsis(std::string_view command);

// Reports a usage error for `command` as one line ending with its synopsis,
// and returns kExitUsage.
int UsageError(std::string_view command, std::string_view problem);

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_USAGE_H_
