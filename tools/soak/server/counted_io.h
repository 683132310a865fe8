// The server's reads and writes, each counted in its tally (server_tally.h)
// as limpwatch counts it: every call, failed ones included, and the bytes
// of those that moved any.
#ifndef LIMPWATCH_TOOLS_SOAK_SERVER_COUNTED_IO_H_
#define LIMPWATCH_TOOLS_SOAK_SERVER_COUNTED_IO_H_

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include "soak_protocol.h"

namespace limpwatch::soak {

ssize_t CountedRead(CountedKind kind, int fd, void* buffer, size_t size);
ssize_t CountedWrite(CountedKind kind, int fd, const void* buffer, size_t size);
ssize_t CountedWritev(CountedKind kind, int fd, const iovec* vectors, int count);
ssize_t CountedPread(int fd, void* buffer, size_t size, off_t offset);    // a file
ssize_t CountedPwrite(int fd, const void* buffer, size_t size, off_t offset);

// Reads exactly `size` bytes (retrying short reads and EINTR). False at
// end of file or on an error.
bool ReadFull(CountedKind kind, int fd, void* buffer, size_t size);
// Writes a header and a payload completely, with writev (retrying short
// writes and EINTR). False on an error.
bool WriteReply(CountedKind kind, int fd, const void* header, size_t header_size, const void* payload,
                size_t payload_size);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_SERVER_COUNTED_IO_H_
