#include "support/selection_run.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "limpwatch/shm/segment.h"
#include "support/traced_run.h"

namespace limpwatch::testing {

ManifestFile::ManifestFile(const std::string& text) : path_(UniqueSegmentName("/tmp/lw-select-") + ".manifest") {
  Write(text);
}

ManifestFile::~ManifestFile() { std::remove(path_.c_str()); }

void ManifestFile::Write(const std::string& text) {
  std::string temporary = path_ + ".new";
  std::ofstream(temporary) << text;
  std::rename(temporary.c_str(), path_.c_str());
}

SelectionCounters ReadSelectionCounters(const std::string& name, pid_t pid) {
  SelectionCounters counters;
  std::string error;
  auto reader = shm::SegmentReader::Open(shm::SegmentObjectName(name, pid), &error);
  EXPECT_TRUE(reader) << error;
  if (!reader) return counters;
  const shm::ProcessCounters& process = reader->header().counters;
  counters.applied = process.selections_applied.load();
  counters.errors = process.selection_errors.load();
  counters.unselected = process.functions_unselected.load();
  return counters;
}

bool WaitForSelectionsApplied(const std::string& name, pid_t pid, uint64_t applied, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (ReadSelectionCounters(name, pid).applied < applied) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace limpwatch::testing
