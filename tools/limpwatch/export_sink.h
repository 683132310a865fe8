// Where `limpwatch export` writes: standard output, or a file that appears
// under its name only once it is complete.
#ifndef LIMPWATCH_TOOLS_LIMPWATCH_EXPORT_SINK_H_
#define LIMPWATCH_TOOLS_LIMPWATCH_EXPORT_SINK_H_

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace limpwatch::cli {

class ExportSink {
 public:
  // "-" is standard output. Any other path is written as path + ".partial"
  // and renamed by Finish, so that a failed or interrupted export never
  // leaves half a document under the name asked for. Null with a one-line
  // *error when it cannot be created.
  static std::unique_ptr<ExportSink> Open(const std::string& path, std::string* error);
  ~ExportSink();  // removes the partial file when Finish was not reached
  ExportSink(const ExportSink&) = delete;
  ExportSink& operator=(const ExportSink&) = delete;

  // False once a write has failed (a full disk, a closed pipe): the caller
  // can stop producing; Finish says why.
  bool Write(std::string_view text);

  // The exit status: kExitOk when everything was written (or a reader of
  // standard output closed it early), else kExitFailure after one line.
  int Finish();

 private:
  ExportSink() = default;

  std::string path_;  // empty for standard output
  std::string partial_path_;
  std::FILE* file_ = nullptr;
  int write_errno_ = 0;
};

}  // namespace limpwatch::cli

#endif  // LIMPWATCH_TOOLS_LIMPWATCH_EXPORT_SINK_H_
