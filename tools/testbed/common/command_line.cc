#include "common/command_line.h"

#include <cstdio>
#include <cstdlib>

namespace limpwatch::testbed {

bool AsksForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") return false;
    if (word == "--help" || word == "-h" || (i == 1 && word == "help")) return true;
  }
  return false;
}

int AnswerHelp(const char* usage) {
  std::fputs(usage, stdout);
  return 0;
}

bool CommandLine::Parse(int argc, char** argv, int first, const std::set<std::string>& switches, std::string* error) {
  bool only_positional = false;
  for (int i = first; i < argc; ++i) {
    std::string word = argv[i];
    if (only_positional || word.size() < 3 || word.rfind("--", 0) != 0) {
      if (word == "--" && !only_positional) {
        only_positional = true;
        continue;
      }
      positional_.push_back(word);
      continue;
    }
    std::string name = word.substr(2);
    size_t equals = name.find('=');
    if (equals != std::string::npos) {
      flags_[name.substr(0, equals)] = name.substr(equals + 1);
    } else if (switches.count(name)) {
      flags_[name] = "1";
    } else if (i + 1 < argc) {
      flags_[name] = argv[++i];
    } else {
      *error = "--" + name + " needs a value";
      return false;
    }
  }
  return true;
}

bool CommandLine::Has(const std::string& name) {
  read_.insert(name);
  return flags_.count(name) != 0;
}

std::string CommandLine::GetString(const std::string& name, const std::string& fallback) {
  read_.insert(name);
  auto flag = flags_.find(name);
  return flag == flags_.end() ? fallback : flag->second;
}

bool CommandLine::GetUint(const std::string& name, uint64_t fallback, uint64_t min, uint64_t max, uint64_t* value,
                          std::string* error) {
  read_.insert(name);
  auto flag = flags_.find(name);
  if (flag == flags_.end()) {
    *value = fallback;
    return true;
  }
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(flag->second.c_str(), &end, 10);
  if (flag->second.empty() || *end != '\0' || flag->second[0] == '-' || parsed < min || parsed > max) {
    *error = "--" + name + " must be a whole number in " + std::to_string(min) + "-" + std::to_string(max);
    return false;
  }
  *value = parsed;
  return true;
}

bool CommandLine::GetDouble(const std::string& name, double fallback, double min, double max, double* value,
                            std::string* error) {
  read_.insert(name);
  auto flag = flags_.find(name);
  if (flag == flags_.end()) {
    *value = fallback;
    return true;
  }
  char* end = nullptr;
  double parsed = std::strtod(flag->second.c_str(), &end);
  if (flag->second.empty() || *end != '\0' || !(parsed >= min && parsed <= max)) {
    *error = "--" + name + " must be a number in " + std::to_string(min) + "-" + std::to_string(max);
    return false;
  }
  *value = parsed;
  return true;
}

std::string CommandLine::ReportUnread(const std::string& command) const {
  for (const auto& [name, value] : flags_) {
    if (!read_.count(name)) return "--" + name + " is not a flag of " + command;
  }
  return {};
}

}  // namespace limpwatch::testbed
