// A private temporary directory, removed with everything in it at the end of
// the test.
#ifndef LIMPWATCH_TESTS_PEER_TEMP_DIR_H_
#define LIMPWATCH_TESTS_PEER_TEMP_DIR_H_

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace limpwatch::analyzer::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "limpwatch-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

  // Writes `content` to `name` with permissions `mode`; returns the full path.
  std::string Write(const std::string& name, const std::string& content, mode_t mode = 0600) const {
    std::string file = path_ + "/" + name;
    {
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << content;
    }
    chmod(file.c_str(), mode);
    return file;
  }

 private:
  std::string path_;
};

}  // namespace limpwatch::analyzer::testing

#endif  // LIMPWATCH_TESTS_PEER_TEMP_DIR_H_
