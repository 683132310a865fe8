// postmark (seed 000 section 4.1; PostMark v1.51's model): a pool of small
// files, then transactions that each read or append one file and create or
// delete another, then deletion of the pool. Every file is smaller than a
// stripe unit and lives wholly on one server (its metadata server), so the
// load is metadata-heavy: each create and delete is a synced keyval commit.
// Ops count files created (create phase), transactions, and files deleted
// (delete phase); the done line breaks them down by phase.
#include <unistd.h>

#include <cerrno>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "client/progress_reporter.h"
#include "client/sequential_pass.h"
#include "client/workloads.h"

namespace limpwatch::testbed::client {
namespace {

class PostmarkRun {
 public:
  PostmarkRun(const WorkloadContext& context, const WorkloadSettings& settings, ProgressReporter* reporter)
      : context_(context),
        settings_(settings),
        reporter_(reporter),
        random_(settings.seed),
        files_per_server_(context.fs->server_count(), 0),
        stripe_(StripeSizeOf(context, settings)) {}

  bool CreatePool() {
    reporter_->SetPhase("create");
    for (uint64_t i = 0; i < settings_.files; ++i) {
      if (context_.interrupted->load()) return false;
      CreateFile();
      reporter_->AddOps(1);
    }
    return true;
  }

  bool RunTransactions() {
    reporter_->SetPhase("transactions");
    for (uint64_t i = 0; i < settings_.transactions; ++i) {
      if (context_.interrupted->load()) return false;
      if (!sizes_.empty()) {
        if (Coin())
          ReadFile(PickFile());
        else
          AppendFile(PickFile());
      }
      if (Coin() || sizes_.empty())
        CreateFile();
      else
        DeleteFile(PickFile());
      reporter_->AddOps(1);
    }
    return true;
  }

  bool DeletePool() {
    reporter_->SetPhase("delete");
    while (!sizes_.empty()) {
      if (context_.interrupted->load()) return false;
      DeleteFile(sizes_.begin()->first);
      reporter_->AddOps(1);
    }
    return true;
  }

  // Deletes whatever is left (after an interruption), uncounted.
  void CleanUp() {
    context_.fs->StopWatchingInterruption();
    for (const auto& [name, size] : sizes_) context_.fs->Remove(name);
    sizes_.clear();
  }

  std::string FilesPerServerJson() const {
    std::string json = "[";
    for (size_t i = 0; i < files_per_server_.size(); ++i) {
      json += (i ? "," : "") + std::to_string(files_per_server_[i]);
    }
    return json + "]";
  }

 private:
  bool Coin() { return std::uniform_int_distribution<int>(0, 1)(random_) == 1; }
  uint64_t RandomSize() {
    return std::uniform_int_distribution<uint64_t>(settings_.min_size, settings_.max_size)(random_);
  }
  std::string PickFile() {
    auto entry = sizes_.begin();
    std::advance(entry, std::uniform_int_distribution<size_t>(0, sizes_.size() - 1)(random_));
    return entry->first;
  }
  void FillBuffer(uint64_t size) {
    buffer_.resize(size);
    for (uint64_t i = 0; i < size; ++i) buffer_[i] = static_cast<uint8_t>(random_());
  }

  void CreateFile() {
    std::string name = "pm-" + std::to_string(getpid()) + "-" + std::to_string(next_file_++);
    OpenFile file;
    int error = context_.fs->CreateOnOneServer(name, stripe_, &file);
    if (error != 0) {
      reporter_->AddError("create", error);
      return;
    }
    uint64_t size = RandomSize();
    FillBuffer(size);
    error = context_.fs->Write(file, 0, buffer_.data(), size);
    if (error != 0)
      reporter_->AddError("write", error);
    else
      reporter_->AddBytes(size);
    sizes_[name] = error == 0 ? size : 0;
    ++files_per_server_[file.metadata_server];
  }

  void ReadFile(const std::string& name) {
    OpenFile file;
    int error = context_.fs->Open(name, &file);
    uint64_t size = sizes_[name];
    buffer_.resize(size);
    if (error == 0) error = context_.fs->Read(file, 0, buffer_.data(), size);
    if (error != 0)
      reporter_->AddError("read", error);
    else
      reporter_->AddBytes(size);
  }

  void AppendFile(const std::string& name) {
    OpenFile file;
    int error = context_.fs->Open(name, &file);
    uint64_t size = sizes_[name];
    uint64_t extra = std::min<uint64_t>(RandomSize(), stripe_ > size ? stripe_ - size : 0);  // stays on one server
    FillBuffer(extra);
    if (error == 0 && extra > 0) error = context_.fs->Write(file, size, buffer_.data(), extra);
    if (error != 0) {
      reporter_->AddError("append", error);
      return;
    }
    sizes_[name] = size + extra;
    reporter_->AddBytes(extra);
  }

  void DeleteFile(const std::string& name) {
    int error = context_.fs->Remove(name);
    if (error != 0 && error != ENOENT) reporter_->AddError("delete", error);
    sizes_.erase(name);
  }

  const WorkloadContext& context_;
  const WorkloadSettings& settings_;
  ProgressReporter* reporter_;
  std::mt19937_64 random_;
  std::map<std::string, uint64_t> sizes_;  // live files and their sizes
  std::vector<uint64_t> files_per_server_;
  std::vector<uint8_t> buffer_;
  uint64_t next_file_ = 0;
  uint32_t stripe_;
};

}  // namespace

int RunPostmark(const WorkloadContext& context, const WorkloadSettings& settings) {
  if (settings.min_size == 0 || settings.min_size > settings.max_size ||
      settings.max_size > StripeSizeOf(context, settings)) {
    EmitJsonLine(
        JsonLine().Add("event", "usage").Add("error", "postmark needs 0 < --min-size <= --max-size <= stripe"));
    return 2;
  }
  ProgressReporter reporter("postmark");
  reporter.Start(JsonLine()
                     .Add("files", settings.files)
                     .Add("transactions", settings.transactions)
                     .Add("min_size", settings.min_size)
                     .Add("max_size", settings.max_size)
                     .Add("seed", settings.seed));
  PostmarkRun run(context, settings, &reporter);
  bool completed = run.CreatePool() && run.RunTransactions() && run.DeletePool();
  if (!completed) run.CleanUp();
  return reporter.Finish(!completed, JsonLine().AddRaw("files_per_server", run.FilesPerServerJson()));
}

}  // namespace limpwatch::testbed::client
