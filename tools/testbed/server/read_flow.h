// flow: a READ's bytes from the bstream to the network.
//
//   storage threads                   poll thread
//   Read(buffer) ... pread ...
//   OnStorageDone -> Send(bulk frame) --> written to the socket
//                                         OnSent -> next Read into that buffer
//
// Up to FlowBuffersPerFlow reads are outstanding; a buffer goes back to the
// disk only once the network has taken its bytes. A short read marks the end
// of the bstream; nothing past it is sent. Bulk frames carry their offset, so
// the client places them wherever they arrive from.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_READ_FLOW_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_READ_FLOW_H_

#include <mutex>
#include <vector>

#include "server/aligned_buffer.h"
#include "server/flow_settings.h"

namespace limpwatch::testbed::flow {

class ReadFlow : public std::enable_shared_from_this<ReadFlow> {
 public:
  explicit ReadFlow(FlowRequest request);

  // Allocates the buffers and issues the first reads.
  void Start();

  // After on_complete: 0 or an errno, and how many bytes from the request's
  // offset exist (and were sent).
  int error() const;
  uint64_t bytes_read() const;

 private:
  void IssueRead(size_t slot, uint64_t file_offset, size_t length);
  void OnStorageDone(size_t slot, uint64_t file_offset, size_t requested, int error, size_t bytes);
  void OnSent(size_t slot, bool sent);
  // Under the lock: hands `slot` its next chunk if any; false when none.
  bool AssignNextChunkLocked(size_t slot, uint64_t* file_offset, size_t* length);
  bool FinishedLocked() const;
  void Complete();

  FlowRequest request_;
  mutable std::mutex mutex_;
  std::vector<AlignedBuffer> buffers_;
  uint64_t end_;          // request end, lowered to the bstream's end when a read comes back short
  uint64_t next_offset_;  // first byte not yet asked of the disk
  uint32_t reads_in_flight_ = 0;
  uint32_t sends_in_flight_ = 0;
  int error_ = 0;
  bool completed_ = false;
};

}  // namespace limpwatch::testbed::flow

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_READ_FLOW_H_
