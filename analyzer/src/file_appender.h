// Appends to a file without the caller waiting for the disk.
//
// The analyzer thread runs inside the server, in the server's cgroup: when
// the fault it should report is a throttled or saturated disk, a plain
// write() of a recording record or an alarm line can wait seconds for that
// disk, and the analyzer's ticks wait with it. Writes go through an
// io_uring instead: the kernel performs them while the analyzer moves on.
// One write is in flight at a time and the others queue behind it in
// memory, so the bytes land in the order they were appended on any kind of
// file (a pipe completes parallel writes in any order); the queue moves on
// at each Append and at Flush. The file is opened O_APPEND: several
// processes may share one alarms file, and each line lands whole at its end. A queue more than kMaxQueuedBytes behind
// refuses new bytes (counted in failed_writes()) rather than grow without
// bound. Where the kernel refuses io_uring (or LIMPWATCH_IO_URING=0), each
// Append writes at once, as before.
//
// io_uring ties a request to the thread that submitted it and cancels it
// when that thread exits: append from a thread that outlives its writes
// (the analyzer's thread lives as long as the server).
#ifndef LIMPWATCH_ANALYZER_SRC_FILE_APPENDER_H_
#define LIMPWATCH_ANALYZER_SRC_FILE_APPENDER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace limpwatch::analyzer {

class FileAppender {
 public:
  static constexpr size_t kMaxQueuedBytes = 8u << 20;

  // Opens or creates `path` for appending. Null + *error on failure.
  static std::unique_ptr<FileAppender> Open(const std::string& path, std::string* error);
  ~FileAppender();  // waits for every queued write
  FileAppender(const FileAppender&) = delete;
  FileAppender& operator=(const FileAppender&) = delete;

  // Queues `bytes` at the end of the file. False when refused (counted in
  // failed_writes()): the queue is full, or the synchronous write failed.
  bool Append(std::vector<uint8_t> bytes);
  // Waits for every queued write; false if any failed since the last Flush.
  bool Flush();

  uint64_t size() const { return appended_end_; }  // the file's size once every queued write lands
  bool uses_io_uring() const;
  uint64_t failed_writes() const { return failed_writes_; }
  size_t writes_pending() const { return queue_.size(); }  // the one in flight included

 private:
  FileAppender() = default;
  struct Ring;
  // Collects a finished write (waiting for it when `wait`) and submits the next.
  void Advance(bool wait);
  bool WriteNow(const std::vector<uint8_t>& bytes);

  int fd_ = -1;
  uint64_t appended_end_ = 0;  // the size at open plus every byte appended since
  std::unique_ptr<Ring> ring_;
  std::deque<std::vector<uint8_t>> queue_;  // front: in flight when in_flight_
  size_t queued_bytes_ = 0;
  bool in_flight_ = false;
  uint64_t failed_writes_ = 0;
  uint64_t failed_at_last_flush_ = 0;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_FILE_APPENDER_H_
