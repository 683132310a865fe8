#include "load_client.h"
#include "soak_clock.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

namespace limpwatch::soak {
namespace {

constexpr int kReplyTimeoutSeconds = 60;

size_t Slot(RequestType type) { return static_cast<size_t>(type) % kRequestTypeSlots; }

// Payload sizes spread evenly over 16 B .. 32 KiB on a log scale.
uint32_t PayloadSize(std::mt19937_64& random) {
  std::uniform_real_distribution<double> exponent(4.0, 15.0);
  return uint32_t(std::exp2(exponent(random)));
}

}  // namespace

void LoadTally::Fail(const std::string& why) {
  failures.fetch_add(1);
  std::lock_guard lock(mutex);
  if (first_failure.empty()) first_failure = why;
}

SoakConnection::SoakConnection(const ServerEndpoint& endpoint, Transport transport, LoadTally* tally)
    : endpoint_(endpoint), transport_(transport), tally_(tally) {}

SoakConnection::~SoakConnection() { Close(); }

void SoakConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool SoakConnection::Connect() {
  Close();
  if (transport_ == Transport::kTcp) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(endpoint_.tcp_port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      return Failed(std::string("connect to 127.0.0.1:") + std::to_string(endpoint_.tcp_port) + ": " +
                    std::strerror(errno));
    }
  } else {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, endpoint_.unix_path.c_str(), sizeof address.sun_path - 1);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      return Failed("connect to " + endpoint_.unix_path + ": " + std::strerror(errno));
    }
  }
  timeval timeout{kReplyTimeoutSeconds, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  tally_->connections.fetch_add(1);
  return true;
}

bool SoakConnection::Failed(const std::string& why) {
  tally_->Fail(why);
  Close();
  return false;
}

bool SoakConnection::SendAll(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t sent = send(fd_, bytes + done, size - done, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    done += size_t(sent);
    tally_->bytes_sent[size_t(transport_)].fetch_add(uint64_t(sent));
  }
  return true;
}

bool SoakConnection::ReceiveAll(void* data, size_t size) {
  auto* bytes = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t got = recv(fd_, bytes + done, size - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += size_t(got);
    tally_->bytes_received[size_t(transport_)].fetch_add(uint64_t(got));
  }
  return true;
}

bool SoakConnection::Request(RequestType type, const std::vector<uint8_t>& payload, uint32_t argument) {
  if (fd_ < 0 && !Connect()) return false;
  RequestHeader header{kRequestMagic, static_cast<uint16_t>(type), 0, uint32_t(payload.size()), argument};
  tally_->requests[Slot(type)].fetch_add(1);
  if (!SendAll(&header, sizeof header) || !SendAll(payload.data(), payload.size())) {
    return Failed(std::string("sending a request: ") + std::strerror(errno));
  }
  ReplyHeader reply{};
  if (!ReceiveAll(&reply, sizeof reply)) return Failed(std::string("no reply: ") + std::strerror(errno));
  if (reply.magic != kReplyMagic || reply.length > kMaxPayloadBytes) return Failed("a malformed reply");
  reply_.resize(reply.length);
  if (!ReceiveAll(reply_.data(), reply_.size())) return Failed(std::string("a cut reply: ") + std::strerror(errno));
  bool echoed = type != RequestType::kEcho || reply_ == payload;
  if (!echoed) return Failed("an echo that differs from its request");
  tally_->answered[Slot(type)].fetch_add(1);
  if (reply.status != 0) {
    tally_->refused[Slot(type)].fetch_add(1);
    return true;
  }
  if (type == RequestType::kStore) tally_->stored_bytes.fetch_add(payload.size());
  if (type == RequestType::kLoad) tally_->loaded_bytes.fetch_add(reply.length);
  if (type == RequestType::kForkExec) tally_->children_asked.fetch_add(argument);
  if (type == RequestType::kThreads && payload.size() == sizeof(ThreadsRequest)) {
    ThreadsRequest asked;
    std::memcpy(&asked, payload.data(), sizeof asked);
    tally_->threads_asked.fetch_add(asked.threads);
    tally_->thread_calls_asked.fetch_add(uint64_t(asked.threads) * asked.calls_each);
  }
  return true;
}

bool RequestOnce(const ServerEndpoint& endpoint, Transport transport, RequestType type,
                 const std::vector<uint8_t>& payload, uint32_t argument, LoadTally* tally) {
  SoakConnection connection(endpoint, transport, tally);
  return connection.Request(type, payload, argument);
}

bool RequestThreads(const ServerEndpoint& endpoint, uint32_t threads, uint32_t calls_each, LoadTally* tally) {
  ThreadsRequest asked{threads, calls_each};
  std::vector<uint8_t> payload(sizeof asked);
  std::memcpy(payload.data(), &asked, sizeof asked);
  return RequestOnce(endpoint, Transport::kTcp, RequestType::kThreads, payload, 0, tally);
}

LoadGenerator::LoadGenerator(ServerEndpoint endpoint, uint32_t clients, uint64_t short_threads,
                             uint64_t run_seconds, uint64_t seed, LoadTally* tally)
    : endpoint_(std::move(endpoint)),
      clients_(clients),
      short_threads_(short_threads),
      run_seconds_(run_seconds),
      seed_(seed),
      tally_(tally) {}

LoadGenerator::~LoadGenerator() { Stop(); }

void LoadGenerator::Start() {
  if (running_.exchange(true)) return;
  for (uint32_t index = 0; index < clients_; ++index) threads_.emplace_back([this, index] { RunClient(index); });
  threads_.emplace_back([this] { RunChurn(); });
}

void LoadGenerator::Stop() {
  if (!running_.exchange(false)) return;
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

void LoadGenerator::RunClient(uint32_t index) {
  std::mt19937_64 random(seed_ * 1000003 + index);
  Transport transport = index + 1 == clients_ && clients_ > 1 ? Transport::kUnix : Transport::kTcp;
  SoakConnection connection(endpoint_, transport, tally_);
  std::vector<uint8_t> payload;
  while (running_.load(std::memory_order_acquire)) {
    uint64_t requests = 20 + random() % 300;  // then a new connection: the server's threads come and go
    for (uint64_t count = 0; count < requests && running_.load(std::memory_order_acquire); ++count) {
      uint64_t pick = random() % 100;
      RequestType type = pick < 55 ? RequestType::kEcho
                         : pick < 80 ? RequestType::kStore
                         : pick < 95 ? RequestType::kLoad
                                     : RequestType::kSync;
      uint32_t size = PayloadSize(random);
      payload.assign(type == RequestType::kEcho || type == RequestType::kStore ? size : 0, 0);
      for (uint8_t& byte : payload) byte = uint8_t(random());
      uint32_t argument = type == RequestType::kLoad ? size : uint32_t(random());
      if (!connection.Request(type, payload, argument)) SleepMs(100);  // the failure is counted; go on
      SleepMs(random() % 8);
    }
    connection.Close();
  }
}

void LoadGenerator::RunChurn() {
  std::mt19937_64 random(seed_ * 7919 + 17);
  double per_second = double(short_threads_) / double(std::max<uint64_t>(run_seconds_, 1));
  uint64_t started = 0;
  uint64_t begin = NowMs();
  while (running_.load(std::memory_order_acquire)) {
    double elapsed = double(NowMs() - begin) / 1000.0;
    if (double(started) >= per_second * elapsed) {
      SleepMs(50);
      continue;
    }
    uint32_t threads = 20 + uint32_t(random() % 100);
    uint32_t calls_each = 1 + uint32_t(random() % 40);
    RequestThreads(endpoint_, threads, calls_each, tally_);
    started += threads;
  }
}

}  // namespace limpwatch::soak
