#include "launcher/testbed_state.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace limpwatch::testbed::launcher {
namespace {

std::string Escape(const std::string& value) {
  std::string out;
  for (unsigned char c : value) {
    if (c == '%' || c == '=' || c <= ' ' || c >= 0x7f) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Unescape(const std::string& value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '%' && i + 2 < value.size()) {
      out += static_cast<char>(std::strtol(value.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += value[i];
    }
  }
  return out;
}

}  // namespace

std::string StateRecord::Get(const std::string& key) const {
  auto field = fields.find(key);
  return field == fields.end() ? std::string() : field->second;
}

uint64_t StateRecord::GetUint(const std::string& key) const {
  std::string value = Get(key);
  if (value.empty()) return 0;
  char* end = nullptr;
  unsigned long long parsed = std::strtoull(value.c_str(), &end, 10);
  return *end == '\0' ? parsed : 0;
}

bool TestbedState::Load(const std::string& dir, std::string* error) {
  dir_ = dir;
  records_.clear();
  std::ifstream file(PathIn(dir));
  exists_ = static_cast<bool>(file);
  if (!exists_) return true;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream words(line);
    StateRecord record;
    if (!(words >> record.kind)) continue;
    std::string word;
    while (words >> word) {
      size_t equals = word.find('=');
      if (equals == std::string::npos) continue;
      record.fields[Unescape(word.substr(0, equals))] = Unescape(word.substr(equals + 1));
    }
    records_.push_back(std::move(record));
  }
  if (file.bad()) {
    *error = "cannot read " + PathIn(dir);
    return false;
  }
  return true;
}

bool TestbedState::Save(std::string* error) const {
  std::string path = PathIn(dir_);
  std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::trunc);
    for (const auto& record : records_) {
      file << record.kind;
      for (const auto& [key, value] : record.fields) file << " " << Escape(key) << "=" << Escape(value);
      file << "\n";
    }
    if (!file.flush()) {
      *error = "cannot write " + temporary;
      return false;
    }
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    *error = "rename " + temporary + ": " + strerror(errno);
    return false;
  }
  return true;
}

bool TestbedState::Remove(std::string* error) {
  records_.clear();
  if (unlink(PathIn(dir_).c_str()) != 0 && errno != ENOENT) {
    *error = "unlink " + PathIn(dir_) + ": " + strerror(errno);
    return false;
  }
  exists_ = false;
  return true;
}

StateRecord* TestbedState::Cluster() {
  for (auto& record : records_) {
    if (record.kind == "cluster") return &record;
  }
  return nullptr;
}

std::vector<StateRecord*> TestbedState::Servers() {
  std::vector<StateRecord*> servers;
  for (auto& record : records_) {
    if (record.kind == "server") servers.push_back(&record);
  }
  return servers;
}

StateRecord* TestbedState::Server(uint32_t index) {
  for (StateRecord* server : Servers()) {
    if (server->Get("index") == std::to_string(index)) return server;
  }
  return nullptr;
}

std::vector<StateRecord*> TestbedState::Faults() {
  std::vector<StateRecord*> faults;
  for (auto& record : records_) {
    if (record.kind == "fault") faults.push_back(&record);
  }
  return faults;
}

StateRecord* TestbedState::Fault(uint64_t id) {
  for (StateRecord* fault : Faults()) {
    if (fault->GetUint("id") == id) return fault;
  }
  return nullptr;
}

StateRecord& TestbedState::Add(const std::string& kind) {
  records_.push_back({kind, {}});
  return records_.back();
}

void TestbedState::RemoveFault(uint64_t id) {
  for (auto record = records_.begin(); record != records_.end(); ++record) {
    if (record->kind == "fault" && record->GetUint("id") == id) {
      records_.erase(record);
      return;
    }
  }
}

uint64_t TestbedState::NextFaultId() {
  StateRecord* cluster = Cluster();
  uint64_t next = cluster != nullptr ? cluster->GetUint("next_fault_id") : 0;
  if (next == 0) next = 1;
  if (cluster != nullptr) cluster->Set("next_fault_id", next + 1);
  return next;
}

StateLock::StateLock(const std::string& dir) {
  fd_ = open((dir + "/testbed.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

StateLock::~StateLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

}  // namespace limpwatch::testbed::launcher
