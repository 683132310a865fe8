#include "list_files.h"

#include <dirent.h>

namespace limpwatch::eval {

std::vector<std::string> ListFiles(const std::string& directory, const std::string& suffix) {
  std::vector<std::string> files;
  if (DIR* handle = opendir(directory.c_str())) {
    while (dirent* entry = readdir(handle)) {
      std::string name = entry->d_name;
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        files.push_back(directory + "/" + name);
      }
    }
    closedir(handle);
  }
  return files;
}

}  // namespace limpwatch::eval
