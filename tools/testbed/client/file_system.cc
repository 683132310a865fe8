#include "client/file_system.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/message_codec.h"

namespace limpwatch::testbed::client {
namespace {

// FNV-1a: a stable hash, the same in every client.
uint64_t HashName(const std::string& name) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

int ReadHandleReply(const std::vector<uint8_t>& reply, uint64_t* handle) {
  PayloadReader reader(reply);
  *handle = reader.GetU64();
  return reader.ok() && *handle != kInvalidHandle ? 0 : EPROTO;
}

}  // namespace

TestbedFileSystem::TestbedFileSystem(const TestbedConfig& config, int timeout_ms, const std::atomic<bool>* interrupted)
    : config_(config), executor_(config.servers.size()) {
  for (const auto& server : config.servers) {
    connections_.push_back(std::make_unique<ServerConnection>(server, timeout_ms, interrupted));
  }
}

uint32_t TestbedFileSystem::MetadataServerFor(const std::string& name) const {
  return static_cast<uint32_t>(HashName(name) % connections_.size());
}

void TestbedFileSystem::StopWatchingInterruption() {
  for (auto& connection : connections_) connection->StopWatchingInterruption();
}

int TestbedFileSystem::Ping(uint32_t server, uint32_t* server_index) {
  std::vector<uint8_t> reply;
  int error = connections_[server]->Call(Operation::kPing, 0, {}, &reply);
  if (error != 0) return error;
  PayloadReader reader(reply);
  *server_index = reader.GetU32();
  return reader.ok() ? 0 : EPROTO;
}

int TestbedFileSystem::CreateMetafile(const std::string& name, uint32_t metadata_server, uint32_t stripe_size,
                                      const std::vector<uint32_t>& servers, OpenFile* file) {
  std::vector<uint64_t> handles(servers.size(), kInvalidHandle);
  // The datafiles first, in parallel (one create per server), then the metafile.
  std::vector<uint32_t> unique_servers = servers;
  std::sort(unique_servers.begin(), unique_servers.end());
  unique_servers.erase(std::unique(unique_servers.begin(), unique_servers.end()), unique_servers.end());
  if (unique_servers.size() != servers.size()) return EINVAL;
  int error = executor_.RunOnServers(unique_servers, [&](uint32_t server) {
    std::vector<uint8_t> reply;
    int status = connections_[server]->Call(Operation::kCreateDatafile, 0, {}, &reply);
    if (status != 0) return status;
    size_t position = static_cast<size_t>(std::find(servers.begin(), servers.end(), server) - servers.begin());
    return ReadHandleReply(reply, &handles[position]);
  });
  ObjectAttributes attributes;
  attributes.type = ObjectType::kMetafile;
  attributes.stripe_size = stripe_size;
  attributes.datafiles = handles;
  uint64_t metafile = kInvalidHandle;
  if (error == 0) {
    PayloadWriter request;
    request.PutString(name);
    attributes.Encode(&request);
    std::vector<uint8_t> reply;
    error = connections_[metadata_server]->Call(Operation::kCreateMetafile, 0, request.bytes(), &reply);
    if (error == 0) error = ReadHandleReply(reply, &metafile);
  }
  if (error != 0) {
    // Do not leave orphaned datafiles behind a failed create.
    for (size_t i = 0; i < servers.size(); ++i) {
      if (handles[i] == kInvalidHandle) continue;
      std::vector<uint8_t> reply;
      connections_[servers[i]]->Call(Operation::kRemoveDatafile, handles[i], {}, &reply);
    }
    return error;
  }
  file->name = name;
  file->metafile = metafile;
  file->metadata_server = metadata_server;
  file->layout.stripe_size = stripe_size;
  file->layout.datafiles.clear();
  for (size_t i = 0; i < servers.size(); ++i) file->layout.datafiles.push_back({handles[i], servers[i]});
  return 0;
}

int TestbedFileSystem::Create(const std::string& name, uint32_t stripe_size, std::vector<uint32_t> servers,
                              OpenFile* file) {
  uint32_t metadata_server = MetadataServerFor(name);
  if (servers.empty()) {
    for (uint32_t i = 0; i < connections_.size(); ++i) {
      servers.push_back(static_cast<uint32_t>((metadata_server + i) % connections_.size()));
    }
  }
  for (uint32_t server : servers) {
    if (server >= connections_.size()) return EINVAL;
  }
  return CreateMetafile(name, metadata_server, stripe_size, servers, file);
}

int TestbedFileSystem::CreateOnOneServer(const std::string& name, uint32_t stripe_size, OpenFile* file) {
  uint32_t server = MetadataServerFor(name);
  return CreateMetafile(name, server, stripe_size, {server}, file);
}

std::string TestbedFileSystem::NameOnServer(const std::string& prefix, uint32_t server) const {
  for (uint64_t n = 0;; ++n) {
    std::string name = prefix + "-" + std::to_string(n);
    if (MetadataServerFor(name) == server) return name;
  }
}

int TestbedFileSystem::Open(const std::string& name, OpenFile* file) {
  uint32_t metadata_server = MetadataServerFor(name);
  PayloadWriter request;
  request.PutString(name);
  std::vector<uint8_t> reply;
  int error = connections_[metadata_server]->Call(Operation::kLookup, 0, request.bytes(), &reply);
  uint64_t metafile = kInvalidHandle;
  if (error == 0) error = ReadHandleReply(reply, &metafile);
  if (error == 0) error = connections_[metadata_server]->Call(Operation::kGetattr, metafile, {}, &reply);
  if (error != 0) return error;
  PayloadReader reader(reply);
  ObjectAttributes attributes;
  if (!attributes.Decode(&reader) || attributes.type != ObjectType::kMetafile) return EPROTO;
  file->name = name;
  file->metafile = metafile;
  file->metadata_server = metadata_server;
  file->layout.stripe_size = attributes.stripe_size;
  file->layout.datafiles.clear();
  for (uint64_t handle : attributes.datafiles) {
    int64_t server = ServerOfHandle(handle);
    if (server < 0 || static_cast<size_t>(server) >= connections_.size()) return EPROTO;
    file->layout.datafiles.push_back({handle, static_cast<uint32_t>(server)});
  }
  return 0;
}

std::vector<uint32_t> TestbedFileSystem::ServersOf(const OpenFile& file) const {
  std::vector<uint32_t> servers;
  for (const auto& datafile : file.layout.datafiles) servers.push_back(datafile.server);
  return servers;
}

int TestbedFileSystem::TransferStriped(const OpenFile& file, uint64_t offset, uint8_t* data, uint64_t length,
                                       bool write) {
  std::vector<std::vector<LocalRun>> runs = MapLogicalRange(file.layout, offset, data, length);
  std::vector<uint32_t> busy_servers;
  std::vector<int> datafile_of_server(connections_.size(), -1);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].empty()) continue;
    busy_servers.push_back(file.layout.datafiles[i].server);
    datafile_of_server[file.layout.datafiles[i].server] = static_cast<int>(i);
  }
  return executor_.RunOnServers(busy_servers, [&](uint32_t server) {
    size_t index = static_cast<size_t>(datafile_of_server[server]);
    uint64_t handle = file.layout.datafiles[index].handle;
    for (const LocalRun& run : runs[index]) {
      uint64_t moved = 0;
      int error = write ? connections_[server]->Write(handle, run.local_offset, run.pieces, &moved)
                        : connections_[server]->Read(handle, run.local_offset, run.pieces, &moved);
      if (error != 0) return error;
      if (write && moved != run.length) return EIO;
      if (!write && moved < run.length) {
        // Past the datafile's end: zeros, as a hole reads.
        uint64_t skip = moved;
        for (const IoPiece& piece : run.pieces) {
          if (skip >= piece.length) {
            skip -= piece.length;
            continue;
          }
          std::memset(piece.data + skip, 0, piece.length - skip);
          skip = 0;
        }
      }
    }
    return 0;
  });
}

int TestbedFileSystem::Write(const OpenFile& file, uint64_t offset, const uint8_t* data, uint64_t length) {
  return TransferStriped(file, offset, const_cast<uint8_t*>(data), length, true);
}

int TestbedFileSystem::Read(const OpenFile& file, uint64_t offset, uint8_t* data, uint64_t length) {
  return TransferStriped(file, offset, data, length, false);
}

int TestbedFileSystem::Sync(const OpenFile& file) {
  return executor_.RunOnServers(ServersOf(file), [&](uint32_t server) {
    for (const auto& datafile : file.layout.datafiles) {
      if (datafile.server != server) continue;
      std::vector<uint8_t> reply;
      return connections_[server]->Call(Operation::kFsync, datafile.handle, {}, &reply);
    }
    return 0;
  });
}

int TestbedFileSystem::Size(const OpenFile& file, uint64_t* size) {
  std::vector<uint64_t> ends(file.layout.datafiles.size(), 0);
  int error = executor_.RunOnServers(ServersOf(file), [&](uint32_t server) {
    for (size_t i = 0; i < file.layout.datafiles.size(); ++i) {
      if (file.layout.datafiles[i].server != server) continue;
      std::vector<uint8_t> reply;
      int status = connections_[server]->Call(Operation::kGetSize, file.layout.datafiles[i].handle, {}, &reply);
      if (status != 0) return status;
      PayloadReader reader(reply);
      uint64_t local_size = reader.GetU64();
      if (!reader.ok()) return EPROTO;
      ends[i] = LogicalEndOfDatafile(file.layout, i, local_size);
    }
    return 0;
  });
  *size = ends.empty() ? 0 : *std::max_element(ends.begin(), ends.end());
  return error;
}

int TestbedFileSystem::Truncate(const OpenFile& file, uint64_t local_size_per_datafile) {
  return executor_.RunOnServers(ServersOf(file), [&](uint32_t server) {
    for (const auto& datafile : file.layout.datafiles) {
      if (datafile.server != server) continue;
      PayloadWriter request;
      request.PutU64(local_size_per_datafile);
      std::vector<uint8_t> reply;
      return connections_[server]->Call(Operation::kTruncate, datafile.handle, request.bytes(), &reply);
    }
    return 0;
  });
}

int TestbedFileSystem::Remove(const std::string& name) {
  OpenFile file;
  int error = Open(name, &file);
  if (error != 0) return error;
  error = executor_.RunOnServers(ServersOf(file), [&](uint32_t server) {
    for (const auto& datafile : file.layout.datafiles) {
      if (datafile.server != server) continue;
      std::vector<uint8_t> reply;
      int status = connections_[server]->Call(Operation::kRemoveDatafile, datafile.handle, {}, &reply);
      return status == ENOENT ? 0 : status;
    }
    return 0;
  });
  if (error != 0) return error;
  PayloadWriter request;
  request.PutString(name);
  std::vector<uint8_t> reply;
  return connections_[file.metadata_server]->Call(Operation::kRemoveMetafile, 0, request.bytes(), &reply);
}

}  // namespace limpwatch::testbed::client
