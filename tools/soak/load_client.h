// The soak's load on the host server, counted from the client side: what
// was asked, what was answered, and every byte each way per transport. The
// server's segment must show exactly these bytes (and the server's own
// tally these calls): the client side is the workload's own count.
#ifndef LIMPWATCH_TOOLS_SOAK_LOAD_CLIENT_H_
#define LIMPWATCH_TOOLS_SOAK_LOAD_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "soak_protocol.h"

namespace limpwatch::soak {

struct ServerEndpoint {
  uint16_t tcp_port = 0;
  std::string unix_path;
};

enum class Transport : uint32_t { kTcp = 0, kUnix = 1 };
inline constexpr size_t kTransportCount = 2;
inline constexpr size_t kRequestTypeSlots = 8;  // indexed by RequestType

struct LoadTally {
  std::atomic<uint64_t> requests[kRequestTypeSlots] = {};
  std::atomic<uint64_t> answered[kRequestTypeSlots] = {};
  std::atomic<uint64_t> refused[kRequestTypeSlots] = {};  // answered with a non-zero status
  std::atomic<uint64_t> bytes_sent[kTransportCount] = {};
  std::atomic<uint64_t> bytes_received[kTransportCount] = {};
  std::atomic<uint64_t> connections = {};
  std::atomic<uint64_t> failures = {};      // requests not answered: connection lost, bad reply, timeout
  std::atomic<uint64_t> stored_bytes = {};  // payload of store requests
  std::atomic<uint64_t> loaded_bytes = {};  // payload of load replies
  std::atomic<uint64_t> threads_asked = {};
  std::atomic<uint64_t> thread_calls_asked = {};  // threads x calls each
  std::atomic<uint64_t> children_asked = {};

  std::mutex mutex;
  std::string first_failure;
  void Fail(const std::string& why);
};

// One connection to the server; its requests counted in a LoadTally.
class SoakConnection {
 public:
  SoakConnection(const ServerEndpoint& endpoint, Transport transport, LoadTally* tally);
  ~SoakConnection();
  SoakConnection(const SoakConnection&) = delete;
  SoakConnection& operator=(const SoakConnection&) = delete;

  bool Connect();
  // Sends one request and reads its reply. False (counted as a failure)
  // when no complete reply came; the connection is closed then.
  bool Request(RequestType type, const std::vector<uint8_t>& payload, uint32_t argument);
  void Close();

 private:
  bool SendAll(const void* data, size_t size);
  bool ReceiveAll(void* data, size_t size);
  bool Failed(const std::string& why);

  ServerEndpoint endpoint_;
  Transport transport_;
  LoadTally* tally_;
  int fd_ = -1;
  std::vector<uint8_t> reply_;
};

// The mixed load: `clients` threads, the last over the Unix socket, each
// making echo, store, load and sync requests over connections that live
// for a few hundred requests; and one thread that churns short threads at
// a rate that reaches `short_threads` by the end of the run.
class LoadGenerator {
 public:
  LoadGenerator(ServerEndpoint endpoint, uint32_t clients, uint64_t short_threads, uint64_t run_seconds,
                uint64_t seed, LoadTally* tally);
  ~LoadGenerator();
  void Start();
  void Stop();  // joins every thread; their connections are closed

 private:
  void RunClient(uint32_t index);
  void RunChurn();

  ServerEndpoint endpoint_;
  uint32_t clients_;
  uint64_t short_threads_;
  uint64_t run_seconds_;
  uint64_t seed_;
  LoadTally* tally_;
  std::atomic<bool> running_{false};
  std::vector<std::thread> threads_;
};

// One request on a connection of its own (the fault actions' thread bursts
// and forks), counted in `tally`.
bool RequestOnce(const ServerEndpoint& endpoint, Transport transport, RequestType type,
                 const std::vector<uint8_t>& payload, uint32_t argument, LoadTally* tally);

// Asks for `threads` short threads each calling soak_thread_work `calls_each` times.
bool RequestThreads(const ServerEndpoint& endpoint, uint32_t threads, uint32_t calls_each, LoadTally* tally);

}  // namespace limpwatch::soak

#endif  // LIMPWATCH_TOOLS_SOAK_LOAD_CLIENT_H_
