// A server's own disk: an ext4 image file attached to a loop device and
// mounted on the server's storage directory (`start --disk-images MIB`).
//
// On this machine every storage directory is otherwise on the one virtual
// disk, so a process competing for "the server's disk" competes for all of
// them alike. A loop device per server gives each its own request queue and
// its own /sys/block statistics, as a disk per server does in a cluster:
// a reader hogging server1's device queues ahead of server1's I/O only.
// The images are sparse files beside the storage directories (written
// blocks only take space), attached without direct I/O (the backing file
// goes through the page cache, as a RAID controller's cache would), with
// autoclear: unmounting releases the loop device.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_DISK_IMAGE_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_DISK_IMAGE_H_

#include <cstdint>
#include <string>

namespace limpwatch::testbed::launcher {

// Whether loop devices can be attached and ext4 made here; *why when not.
bool DiskImagesAvailable(std::string* why);

// Creates `image` (`mib` MiB, sparse), makes an ext4 file system in it,
// attaches it to a free loop device and mounts it on `mount_point`.
// *loop_device is the device's path (/dev/loopN). On failure nothing stays
// attached or mounted, and the image is removed.
bool MountDiskImage(const std::string& image, uint64_t mib, const std::string& mount_point,
                    std::string* loop_device, std::string* error);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_DISK_IMAGE_H_
