#include "client/sequential_pass.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/socket_util.h"

namespace limpwatch::testbed::client {

uint32_t StripeSizeOf(const WorkloadContext& context, const WorkloadSettings& settings) {
  return settings.stripe_size != 0 ? settings.stripe_size : context.fs->config().stripe_size;
}

uint64_t DefaultRecord(const WorkloadContext& context, uint32_t stripe_size) {
  // Seed 000 sized records so each server gets one large transfer per record.
  return uint64_t{stripe_size} * context.fs->server_count();
}

std::string FileNameOf(const WorkloadSettings& settings, const std::string& workload) {
  return settings.file.empty() ? workload + "-" + std::to_string(getpid()) : settings.file;
}

bool RunSequentialPass(const WorkloadContext& context, const OpenFile& file, PassKind kind, uint64_t size,
                       uint64_t record, std::vector<uint8_t>* buffer, ProgressReporter* reporter,
                       uint64_t deadline_ns) {
  buffer->resize(record);
  for (uint64_t offset = 0; offset < size; offset += record) {
    if (context.interrupted->load()) return false;
    if (deadline_ns != 0 && MonotonicNs() >= deadline_ns) return false;
    uint64_t length = std::min(record, size - offset);
    bool write = kind != PassKind::kRead;
    int error = write ? context.fs->Write(file, offset, buffer->data(), length)
                      : context.fs->Read(file, offset, buffer->data(), length);
    if (error == EINTR) return false;
    if (error != 0) {
      reporter->AddError(write ? "write" : "read", error);
      continue;
    }
    reporter->AddBytes(length);
    reporter->AddOps(1);
  }
  return true;
}

namespace {

// Empties the file before a kWriteNew pass. A failed truncation is counted
// and the pass overwrites instead.
void EmptyBeforeWriting(const WorkloadContext& context, const OpenFile& file, PassKind kind,
                        ProgressReporter* reporter) {
  if (kind != PassKind::kWriteNew) return;
  int error = context.fs->Truncate(file, 0);
  if (error != 0 && error != EINTR) reporter->AddError("truncate", error);
}

}  // namespace

bool RunTimedPasses(const WorkloadContext& context, const OpenFile& file, PassKind kind, uint64_t size, uint64_t record,
                    double seconds, ProgressReporter* reporter) {
  std::vector<uint8_t> buffer;
  if (seconds <= 0) {
    EmptyBeforeWriting(context, file, kind, reporter);
    return RunSequentialPass(context, file, kind, size, record, &buffer, reporter, 0);
  }
  uint64_t deadline = MonotonicNs() + static_cast<uint64_t>(seconds * 1e9);
  while (MonotonicNs() < deadline) {
    EmptyBeforeWriting(context, file, kind, reporter);
    RunSequentialPass(context, file, kind, size, record, &buffer, reporter, deadline);
    if (context.interrupted->load()) return false;
  }
  return true;
}

bool OpenForWriting(const WorkloadContext& context, const WorkloadSettings& settings, uint32_t stripe,
                    ProgressReporter* reporter, SequentialFile* out) {
  out->size = settings.size_bytes;
  int error = context.fs->Open(out->name, &out->file);
  if (error == ENOENT) {
    error = context.fs->Create(out->name, stripe, {}, &out->file);
    out->created = error == 0;
  }
  if (error != 0) reporter->AddError("create", error);
  return error == 0;
}

bool OpenForReading(const WorkloadContext& context, const WorkloadSettings& settings, uint32_t stripe,
                    const std::function<bool(const SequentialFile&)>& prepare, ProgressReporter* reporter,
                    SequentialFile* out, bool* interrupted) {
  *interrupted = false;
  out->size = settings.size_bytes;
  int error = context.fs->Open(out->name, &out->file);
  if (error == 0) {
    error = context.fs->Size(out->file, &out->size);
  } else if (error == ENOENT) {
    error = context.fs->Create(out->name, stripe, {}, &out->file);
    out->created = error == 0;
    if (out->created && !prepare(*out)) {
      context.fs->StopWatchingInterruption();
      context.fs->Remove(out->name);
      *interrupted = true;
      return false;
    }
  }
  if (error != 0) reporter->AddError("open", error);
  return error == 0;
}

int FinishSequential(const WorkloadContext& context, const WorkloadSettings& settings, const SequentialFile& file,
                     bool remove, bool completed, ProgressReporter* reporter) {
  context.fs->StopWatchingInterruption();
  int error = 0;
  if (remove && !settings.keep && (error = context.fs->Remove(file.name)) != 0) reporter->AddError("remove", error);
  return reporter->Finish(!completed, {});
}

}  // namespace limpwatch::testbed::client
