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
// A write the disk takes only in part (it filled up in the middle) is
// counted as failed like one it refused, and what it left must not spoil
// what follows once the disk has room again: a file this appender alone
// writes (a recording) is cut back to before it; in a shared file of lines
// (the alarms file) the next append starts with a newline, so the fragment
// stays a line of its own and the next line lands whole.
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

#include <sys/types.h>

namespace limpwatch::analyzer {

class FileAppender {
 public:
  static constexpr size_t kMaxQueuedBytes = 8u << 20;

  // What to do about a write that landed in part (above).
  enum class TornWrite {
    kNewLine,  // the next append starts on a line of its own: any file, shared or not
    kCutBack,  // the file is cut back to before it: only for a file no one else writes
  };

  // Opens or creates `path` for appending. Null + *error on failure.
  static std::unique_ptr<FileAppender> Open(const std::string& path, std::string* error,
                                            TornWrite torn = TornWrite::kNewLine);
  ~FileAppender();  // waits for every queued write
  FileAppender(const FileAppender&) = delete;
  FileAppender& operator=(const FileAppender&) = delete;

  // Queues `bytes` at the end of the file. False when refused (counted in
  // failed_writes()): the queue is full, or the synchronous write failed.
  bool Append(std::vector<uint8_t> bytes);
  // Waits for every queued write; false if any failed since the last Flush.
  bool Flush();
  // Takes the writes that finished (counting the failed ones) and submits
  // the next, without waiting: a write that failed is counted even when
  // nothing is appended after it for a long while.
  void Collect();

  uint64_t size() const { return appended_end_; }  // the file's size once every queued write lands
  bool uses_io_uring() const;
  bool io_uring_refused() const { return io_uring_refused_; }  // wanted, and the kernel refused it
  uint64_t failed_writes() const { return failed_writes_; }
  size_t writes_pending() const { return queue_.size(); }  // the one in flight included

 private:
  FileAppender() = default;
  struct Ring;
  // Collects a finished write (waiting for it when `wait`) and submits the next.
  void Advance(bool wait);
  // Writes at once; the bytes that landed (all, some, or none: -1).
  ssize_t WriteNow(const std::vector<uint8_t>& bytes);
  // Starts `bytes` on a new line if the file ends in a fragment (kNewLine).
  void PrefixAfterTornWrite(std::vector<uint8_t>* bytes);
  // Accounts for a write of `wanted` bytes of which `landed` did (-1: none);
  // false when it failed, in part or in whole.
  bool Landed(ssize_t landed, size_t wanted);

  int fd_ = -1;
  TornWrite torn_policy_ = TornWrite::kNewLine;
  uint64_t appended_end_ = 0;  // the size at open plus every byte appended since
  uint64_t landed_end_ = 0;    // the size at open plus every byte of the writes that landed whole
  bool ends_torn_ = false;     // the file ends in a fragment of a write (kNewLine)
  bool front_prefixed_ = false;  // the write in flight starts with the newline that ends a fragment
  std::unique_ptr<Ring> ring_;
  std::deque<std::vector<uint8_t>> queue_;  // front: in flight when in_flight_
  size_t queued_bytes_ = 0;
  bool in_flight_ = false;
  bool io_uring_refused_ = false;
  uint64_t failed_writes_ = 0;
  uint64_t failed_at_last_flush_ = 0;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_SRC_FILE_APPENDER_H_
