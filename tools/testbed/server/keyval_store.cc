#include "server/keyval_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/server_log.h"

namespace limpwatch::testbed::trove {
namespace {

constexpr uint32_t kRecordMagic = 0x3152564B;  // "KVR1"
constexpr uint8_t kPut = 1;
constexpr uint8_t kDelete = 2;
constexpr size_t kRecordHeaderSize = 4 + 1 + 4 + 4;
constexpr uint32_t kMaxKeyLength = 4096;
constexpr uint32_t kMaxValueLength = 1 << 20;

void AppendRaw(std::string* out, const void* data, size_t length) {
  out->append(static_cast<const char*>(data), length);
}

std::string EncodeRecord(const KeyvalChange& change) {
  std::string record;
  uint8_t kind = change.value ? kPut : kDelete;
  auto key_length = static_cast<uint32_t>(change.key.size());
  auto value_length = static_cast<uint32_t>(change.value ? change.value->size() : 0);
  AppendRaw(&record, &kRecordMagic, 4);
  AppendRaw(&record, &kind, 1);
  AppendRaw(&record, &key_length, 4);
  AppendRaw(&record, &value_length, 4);
  record += change.key;
  if (change.value) record += *change.value;
  return record;
}

}  // namespace

KeyvalStore::~KeyvalStore() {
  if (fd_ >= 0) close(fd_);
}

bool KeyvalStore::Open(const std::string& storage_space, bool sync_on_commit, std::string* error) {
  sync_on_commit_ = sync_on_commit;
  std::string path = storage_space + "/keyval.log";
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    *error = "open " + path + ": " + strerror(errno);
    return false;
  }
  return Replay(error);
}

bool KeyvalStore::Replay(std::string* error) {
  struct stat status {};
  if (fstat(fd_, &status) != 0) {
    *error = std::string("fstat keyval.log: ") + strerror(errno);
    return false;
  }
  std::string log(static_cast<size_t>(status.st_size), '\0');
  size_t loaded = 0;
  while (loaded < log.size()) {
    ssize_t count = pread(fd_, log.data() + loaded, log.size() - loaded, static_cast<off_t>(loaded));
    if (count <= 0) break;
    loaded += static_cast<size_t>(count);
  }
  log.resize(loaded);
  size_t position = 0;
  while (log.size() - position >= kRecordHeaderSize) {
    uint32_t magic, key_length, value_length;
    uint8_t kind;
    std::memcpy(&magic, log.data() + position, 4);
    std::memcpy(&kind, log.data() + position + 4, 1);
    std::memcpy(&key_length, log.data() + position + 5, 4);
    std::memcpy(&value_length, log.data() + position + 9, 4);
    if (magic != kRecordMagic || (kind != kPut && kind != kDelete) || key_length > kMaxKeyLength ||
        value_length > kMaxValueLength) {
      break;
    }
    size_t end = position + kRecordHeaderSize + key_length + value_length;
    if (end > log.size()) break;
    std::string key = log.substr(position + kRecordHeaderSize, key_length);
    if (kind == kPut) {
      entries_[key] = log.substr(position + kRecordHeaderSize + key_length, value_length);
    } else {
      entries_.erase(key);
    }
    position = end;
  }
  if (position != log.size()) {
    LogLine("trove: keyval.log has " + std::to_string(log.size() - position) +
            " bytes of a torn record at its end; cutting them");
    if (ftruncate(fd_, static_cast<off_t>(position)) != 0) {
      *error = std::string("ftruncate keyval.log: ") + strerror(errno);
      return false;
    }
  }
  log_size_ = position;
  return true;
}

std::optional<std::string> KeyvalStore::Get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto entry = entries_.find(key);
  if (entry == entries_.end()) return std::nullopt;
  return entry->second;
}

size_t KeyvalStore::size() {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

int KeyvalStore::AppendRecords(const std::string& encoded) {
  size_t written = 0;
  while (written < encoded.size()) {
    ssize_t count =
        pwrite(fd_, encoded.data() + written, encoded.size() - written, static_cast<off_t>(log_size_ + written));
    if (count < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      // Never leave half a batch behind: cut back to the last whole record.
      if (ftruncate(fd_, static_cast<off_t>(log_size_)) != 0) LogLine("trove: cannot cut keyval.log back");
      return error;
    }
    written += static_cast<size_t>(count);
  }
  return 0;
}

int KeyvalStore::SyncLog() { return fdatasync(fd_) == 0 ? 0 : errno; }

int KeyvalStore::Commit(const std::vector<KeyvalChange>& changes) {
  std::string encoded;
  for (const auto& change : changes) encoded += EncodeRecord(change);
  std::lock_guard lock(mutex_);
  int error = AppendRecords(encoded);
  if (error == 0 && sync_on_commit_) error = SyncLog();
  if (error != 0) {
    if (ftruncate(fd_, static_cast<off_t>(log_size_)) != 0) LogLine("trove: cannot cut keyval.log back");
    return error;
  }
  log_size_ += encoded.size();
  for (const auto& change : changes) {
    if (change.value) {
      entries_[change.key] = *change.value;
    } else {
      entries_.erase(change.key);
    }
  }
  return 0;
}

}  // namespace limpwatch::testbed::trove
