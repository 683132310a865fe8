// trove keyval: the metadata database (PVFS keeps it in Berkeley DB).
//
// An append-only log file, <storage>/keyval.log, of put / delete records,
// replayed into memory at start. A commit appends one batch of records with
// a single write and, when TroveSyncMeta is on, fdatasync()s the log before
// returning: like PVFS, every metadata change is on disk before the client
// hears about it, which is what makes metadata-heavy loads disk-bound.
//
//   record: u32 magic "KVR1" | u8 kind (1 put, 2 delete) | u32 key length |
//           u32 value length | key | value
//
// A torn record at the end (a crash mid-append) is dropped and the file cut
// back to the last whole record. A failed append (ENOSPC) is cut back too, so
// the log never holds half a batch.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_KEYVAL_STORE_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_KEYVAL_STORE_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace limpwatch::testbed::trove {

struct KeyvalChange {
  std::string key;
  std::optional<std::string> value;  // nullopt deletes the key
};

class KeyvalStore {
 public:
  KeyvalStore() = default;
  ~KeyvalStore();
  KeyvalStore(const KeyvalStore&) = delete;
  KeyvalStore& operator=(const KeyvalStore&) = delete;

  // Opens (creating) and replays <storage_space>/keyval.log.
  bool Open(const std::string& storage_space, bool sync_on_commit, std::string* error);

  std::optional<std::string> Get(const std::string& key);

  // Appends the batch and syncs it; applies it in memory only once it is on
  // disk. Returns 0 or an errno (ENOSPC, EIO, ...). Thread-safe.
  int Commit(const std::vector<KeyvalChange>& changes);

  size_t size();

 private:
  bool Replay(std::string* error);
  int AppendRecords(const std::string& encoded);
  int SyncLog();

  std::mutex mutex_;
  int fd_ = -1;
  uint64_t log_size_ = 0;
  bool sync_on_commit_ = true;
  std::unordered_map<std::string, std::string> entries_;
};

}  // namespace limpwatch::testbed::trove

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_KEYVAL_STORE_H_
