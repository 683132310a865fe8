#include "support/io_run.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace limpwatch::testing {

ScratchDirectory::ScratchDirectory(const std::string& parent) {
  std::string pattern = parent + "/limpwatch-io-XXXXXX";
  if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

IoRun RunIoCalls(const std::vector<std::string>& args, std::vector<std::string> environment) {
  IoRun io;
  io.name = UniqueSegmentName("io");
  environment.push_back("LIMPWATCH_NAME=" + io.name);
  environment.push_back("LIMPWATCH_KEEP=1");
  io.run = RunProgram(TestProgram("io_calls"), args, environment);
  EXPECT_EQ(io.run.exit_status, 0) << "io_calls " << (args.empty() ? "" : args[0]) << ": " << io.run.output;
  if (io.run.pid > 0) io.snapshot = ReadSegment(io.name, io.run.pid);
  return io;
}

const shm::IoValues& Io(const shm::Snapshot& snapshot, shm::FdKind kind, shm::IoOperation operation) {
  return snapshot.io.at(kind, operation);
}

uint64_t ErrnoCount(const shm::Snapshot& snapshot, shm::FdKind kind, shm::IoOperation operation, int error) {
  uint64_t count = 0;
  for (const auto& record : snapshot.io.errnos) {
    if (record.kind == kind && record.operation == operation && record.error == error) count += record.count;
  }
  return count;
}

uint64_t CallsOutside(const shm::Snapshot& snapshot,
                      const std::vector<std::pair<shm::FdKind, shm::IoOperation>>& listed) {
  uint64_t calls = 0;
  for (uint32_t kind = 0; kind < shm::kFdKindCount; ++kind) {
    for (uint32_t operation = 0; operation < shm::kIoOperationCount; ++operation) {
      std::pair<shm::FdKind, shm::IoOperation> pair{static_cast<shm::FdKind>(kind),
                                                    static_cast<shm::IoOperation>(operation)};
      if (std::find(listed.begin(), listed.end(), pair) != listed.end()) continue;
      calls += snapshot.io.counters[kind][operation].calls;
    }
  }
  return calls;
}

std::string LineAfter(const std::string& output, const std::string& label) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(label + " ", 0) == 0) return line.substr(label.size() + 1);
  }
  return "";
}

}  // namespace limpwatch::testing
