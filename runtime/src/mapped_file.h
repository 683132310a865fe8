// A read-only mapping of a whole file, for reading ELF objects off the hot
// path (symbol names, selection by source file). Unmapped on destruction.
#ifndef LIMPWATCH_RUNTIME_SRC_MAPPED_FILE_H_
#define LIMPWATCH_RUNTIME_SRC_MAPPED_FILE_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace limpwatch::runtime {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat status{};
    if (fstat(fd, &status) == 0 && status.st_size > 0) {
      void* data = mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) {
        data_ = static_cast<const uint8_t*>(data);
        size_ = static_cast<size_t>(status.st_size);
      }
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // A pointer to `count` objects of T at `offset`, or null if out of bounds.
  template <typename T>
  const T* At(uint64_t offset, uint64_t count = 1) const {
    if (data_ == nullptr || offset > size_ || count > (size_ - offset) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(data_ + offset);
  }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_MAPPED_FILE_H_
