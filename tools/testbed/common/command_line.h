// Flags of the test-bed programs: "--name value", "--name=value", bare
// "--switch" for declared switches, and positional words. Every flag must be
// read by the program; ReportUnread names the ones nobody asked for (typos).
#ifndef LIMPWATCH_TOOLS_TESTBED_COMMON_COMMAND_LINE_H_
#define LIMPWATCH_TOOLS_TESTBED_COMMON_COMMAND_LINE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace limpwatch::testbed {

// Whether argv asks for help: "--help" or "-h" anywhere, or "help" first.
// A program that is asked prints its usage on stdout and exits 0.
bool AsksForHelp(int argc, char** argv);

// Prints `usage` on stdout; returns 0, the exit status of an answered --help.
int AnswerHelp(const char* usage);

class CommandLine {
 public:
  // Parses argv[first..argc). Everything after a bare "--" is positional.
  bool Parse(int argc, char** argv, int first, const std::set<std::string>& switches, std::string* error);

  const std::vector<std::string>& positional() const { return positional_; }
  bool Has(const std::string& name);
  std::string GetString(const std::string& name, const std::string& fallback);
  // False (with *error) when present but not a number in [min, max].
  bool GetUint(const std::string& name, uint64_t fallback, uint64_t min, uint64_t max, uint64_t* value,
               std::string* error);
  bool GetDouble(const std::string& name, double fallback, double min, double max, double* value, std::string* error);
  // "--a is not a flag of COMMAND" for the first unread flag; empty if none.
  std::string ReportUnread(const std::string& command) const;

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> flags_;
  std::set<std::string> read_;
};

}  // namespace limpwatch::testbed

#endif  // LIMPWATCH_TOOLS_TESTBED_COMMON_COMMAND_LINE_H_
