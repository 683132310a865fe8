#include "segment_state.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace limpwatch::cli {

std::string ListingReason(const shm::SegmentListing& listing) {
  std::string prefix = "segment '" + listing.object_name + "': ";
  if (listing.error.starts_with(prefix)) return listing.error.substr(prefix.size());
  return listing.error;
}

ObjectPeek PeekObject(const std::string& object_name) {
  ObjectPeek peek;
  int fd = shm_open(("/" + object_name).c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return peek;
  struct stat status{};
  if (fstat(fd, &status) == 0) {
    peek.opened = true;
    peek.size = static_cast<uint64_t>(status.st_size);
  }
  // Only the fields every version keeps at fixed offsets (layout.h asserts them).
  uint64_t magic = 0;
  uint16_t version_major = 0;
  uint32_t owner_state = 0;
  if (peek.size >= shm::kHeaderSize &&
      pread(fd, &magic, sizeof magic, offsetof(shm::SegmentHeader, magic)) == sizeof magic &&
      pread(fd, &version_major, sizeof version_major, offsetof(shm::SegmentHeader, version_major)) ==
          sizeof version_major &&
      pread(fd, &owner_state, sizeof owner_state, offsetof(shm::SegmentHeader, owner_state)) == sizeof owner_state) {
    peek.still_creating = magic == shm::kSegmentMagic && version_major == shm::kVersionMajor &&
                          owner_state == static_cast<uint32_t>(shm::OwnerState::kCreating);
  }
  close(fd);
  return peek;
}

std::string StateText(const shm::SegmentListing& listing, const ObjectPeek& peek) {
  if (listing.error.empty()) return shm::LivenessName(listing.liveness);
  // ListSegments calls every refused segment with a living pid "creating";
  // only a header that really is unpublished earns that word here.
  if (listing.liveness == shm::Liveness::kCreating && peek.still_creating) return "creating";
  return "invalid: " + ListingReason(listing);
}

bool PidExists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace limpwatch::cli
