// A small tmpfs the soak mounts for the host server's recording or alarms
// file, so that it can fill it up, empty it again, or mount it read-only,
// without touching any other file system. Mounting needs root; without it
// the directory is a plain one and `mounted()` is false (with the reason).
#ifndef LIMPWATCH_TOOLS_SOAK_SMALL_DISK_H_
#define LIMPWATCH_TOOLS_SOAK_SMALL_DISK_H_

#include <cstdint>
#include <string>

namespace limpwatch::soak {

class SmallDisk {
 public:
  // Creates `directory` and mounts a tmpfs of `size_bytes` on it (read-only
  // when asked: nothing can be created in it until SetReadOnly(false)).
  SmallDisk(const std::string& directory, uint64_t size_bytes, bool read_only);
  ~SmallDisk();  // frees, unmounts and removes the directory
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& why_not_mounted() const { return problem_; }
  const std::string& directory() const { return directory_; }
  std::string Path(const std::string& name) const { return directory_ + "/" + name; }

  // Fills every free byte with a file of its own; false with *error when
  // the file could not be written at all. Free() removes it.
  bool Fill(std::string* error);
  void Free();
  bool full() const { return !filler_.empty(); }

  // Remounts it read-only or read-write. Read-only fails (EBUSY) while a
  // file in it is open for writing.
  bool SetReadOnly(bool read_only, std::string* error);
  bool read_only() const { return read_only_; }

 private:
  std::string directory_;
  std::string problem_;
  std::string filler_;
  std::string size_option_;
  bool mounted_ = false;
  bool read_only_ = false;
};

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SMALL_DISK_H_
