// flow: a WRITE's bytes from the network to the bstream.
//
//   poll thread                     storage threads
//   ReceiveSpan -> free buffer?
//   Received    -> buffer full  --> Write(buffer) ... pwrite ...
//                                   OnStorageDone -> buffer free again,
//                                                    resume a paused connection
//
// At most FlowBuffersPerFlow buffers are in use; when all wait on the disk
// the connection stops reading (back-pressure on the client). The flow
// completes when every byte was received and every buffer written, or after
// an error once the client's remaining bytes were drained (so the connection
// stays usable and the error reaches the client in the response).
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_WRITE_FLOW_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_WRITE_FLOW_H_

#include <mutex>
#include <vector>

#include "server/aligned_buffer.h"
#include "server/flow_settings.h"

namespace limpwatch::testbed::flow {

class WriteFlow : public bmi::BulkReceiver, public std::enable_shared_from_this<WriteFlow> {
 public:
  explicit WriteFlow(FlowRequest request);

  // Posts the receive for the request's tag (or completes at once for 0 bytes).
  void Start();
  // For a request refused before any I/O (unknown handle): receives and
  // drops the client's bytes, then completes with `error`.
  void StartDiscarding(int error);

  // After on_complete: 0 or an errno, and the bytes on the bstream.
  int error() const;
  uint64_t bytes_written() const;

  // bmi::BulkReceiver, on the poll thread.
  std::span<uint8_t> ReceiveSpan(uint64_t offset) override;
  void Received(size_t bytes) override;
  void ConnectionLost() override;

 private:
  struct Slot {
    AlignedBuffer buffer;
    bool busy = false;
  };

  void SubmitBuffer(size_t slot, size_t length, uint64_t file_offset);
  void OnStorageDone(size_t slot, int error, size_t bytes);
  bool FinishedLocked() const;
  void Complete();

  FlowRequest request_;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  int filling_ = -1;        // slot being filled by the network, or -1
  size_t fill_ = 0;         // bytes in it
  size_t fill_target_ = 0;  // bytes it will hold before going to disk
  uint64_t received_ = 0;
  uint64_t written_ = 0;
  uint32_t in_flight_ = 0;  // buffers on their way to disk
  int error_ = 0;
  bool connection_lost_ = false;
  bool receiver_waiting_ = false;
  bool completed_ = false;
  std::vector<uint8_t> discard_;  // sink for bytes that arrive after an error
};

}  // namespace limpwatch::testbed::flow

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_WRITE_FLOW_H_
