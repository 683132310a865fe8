// The client's connection to one server: blocking framed requests with a
// timeout (seed 001's clients give up on a server after 10 s).
//
// Errors are errno values: the server's own status (ENOSPC, EMFILE, ENOENT,
// ... propagated unchanged) or the transport's (ECONNREFUSED, ECONNRESET,
// ETIMEDOUT when the server does not answer in time, EPROTO for a bad reply,
// EINTR when the client is told to stop). After a transport error the
// connection is dropped and the next request reconnects; requests that are
// safe to repeat are retried on a broken (not a timed-out) connection, up to
// three times after 0 / 50 / 200 ms, so a restarted server or a removed
// relay costs a reconnect, not an error.
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_SERVER_CONNECTION_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_SERVER_CONNECTION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/server_config.h"
#include "common/wire_format.h"

namespace limpwatch::testbed::client {

// A run of consecutive bytes of a datafile, held in the caller's memory.
struct IoPiece {
  uint8_t* data = nullptr;
  size_t length = 0;
};

class ServerConnection {
 public:
  ServerConnection(ServerAlias alias, int timeout_ms, const std::atomic<bool>* interrupted);
  ~ServerConnection();
  ServerConnection(const ServerConnection&) = delete;
  ServerConnection& operator=(const ServerConnection&) = delete;

  const ServerAlias& alias() const { return alias_; }

  // A control request; *reply receives the response payload after its status.
  int Call(Operation operation, uint64_t handle, const std::vector<uint8_t>& request, std::vector<uint8_t>* reply);
  // WRITE: the pieces' bytes go to the datafile from `offset` on.
  int Write(uint64_t handle, uint64_t offset, std::span<const IoPiece> pieces, uint64_t* written);
  // READ into the pieces; *bytes_read counts the bytes that exist (the rest of
  // the pieces is left untouched).
  int Read(uint64_t handle, uint64_t offset, std::span<const IoPiece> pieces, uint64_t* bytes_read);

  void Disconnect();
  // Requests then ignore the stop flag (their timeout still holds): how a
  // stopped workload still removes its files.
  void StopWatchingInterruption() { interrupted_ = nullptr; }

 private:
  int EnsureConnected();
  uint64_t Deadline() const;
  int SendRequest(Operation operation, uint64_t handle, uint64_t offset, const std::vector<uint8_t>& payload,
                  uint32_t* tag);
  int SendBulk(uint32_t tag, uint64_t handle, uint64_t offset, std::span<const IoPiece> pieces);
  // Reads frames until the response to `tag`; bulk frames go into `pieces`
  // (local offsets from `offset`).
  int AwaitResponse(uint32_t tag, uint64_t offset, std::span<const IoPiece> pieces, std::vector<uint8_t>* reply);
  int ReceiveBulkPayload(const FrameHeader& header, uint64_t offset, std::span<const IoPiece> pieces);
  // Runs `attempt` and, after a broken connection, once more when `idempotent`.
  template <typename Attempt>
  int WithRetry(bool idempotent, Attempt attempt);

  ServerAlias alias_;
  int timeout_ms_;
  const std::atomic<bool>* interrupted_;
  int fd_ = -1;
  uint32_t next_tag_ = 1;
};

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_SERVER_CONNECTION_H_
