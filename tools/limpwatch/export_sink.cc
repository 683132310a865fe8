#include "export_sink.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "commands.h"
#include "output.h"

namespace limpwatch::cli {

std::unique_ptr<ExportSink> ExportSink::Open(const std::string& path, std::string* error) {
  std::unique_ptr<ExportSink> sink(new ExportSink());
  if (path == "-") return sink;
  sink->path_ = path;
  sink->partial_path_ = path + ".partial";
  sink->file_ = std::fopen(sink->partial_path_.c_str(), "w");
  if (sink->file_ == nullptr) {
    *error = "output '" + path + "': cannot create: " + std::strerror(errno);
    return nullptr;
  }
  return sink;
}

ExportSink::~ExportSink() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  unlink(partial_path_.c_str());
}

bool ExportSink::Write(std::string_view text) {
  if (file_ == nullptr) return path_.empty() ? WriteOut(text) : false;
  if (write_errno_ != 0) return false;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    write_errno_ = errno != 0 ? errno : EIO;
    return false;
  }
  return true;
}

int ExportSink::Finish() {
  if (path_.empty()) return FinishOutput(kExitOk);
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0 && write_errno_ == 0) write_errno_ = errno != 0 ? errno : EIO;
  if (write_errno_ == 0 && std::rename(partial_path_.c_str(), path_.c_str()) != 0) write_errno_ = errno;
  if (write_errno_ == 0) return kExitOk;
  unlink(partial_path_.c_str());
  return Fail(kExitFailure, "output '" + path_ + "': cannot write: " + std::strerror(write_errno_));
}

}  // namespace limpwatch::cli
