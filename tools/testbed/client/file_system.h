// The client side of the test-bed file system (PVFS's system interface):
// names, striped files, and parallel I/O over one connection per server.
//
// Where things live:
//   - a file's metadata server is hash(name) mod N: its directory entry and
//     attributes (stripe size, datafile handles) are there;
//   - a striped file has one datafile on each of its servers, stripe order
//     starting at the metadata server (so files spread their first stripe);
//   - a small file created on one server (postmark) has its one datafile on
//     its metadata server: all of it lives on one server.
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_FILE_SYSTEM_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_FILE_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/server_connection.h"
#include "client/server_executor.h"
#include "client/stripe_layout.h"
#include "common/object_attributes.h"
#include "common/server_config.h"

namespace limpwatch::testbed::client {

struct OpenFile {
  std::string name;
  uint64_t metafile = 0;
  uint32_t metadata_server = 0;
  FileLayout layout;
};

class TestbedFileSystem {
 public:
  TestbedFileSystem(const TestbedConfig& config, int timeout_ms, const std::atomic<bool>* interrupted);

  size_t server_count() const { return connections_.size(); }
  const TestbedConfig& config() const { return config_; }
  ServerConnection& connection(uint32_t server) { return *connections_[server]; }
  uint32_t MetadataServerFor(const std::string& name) const;

  // Every call returns 0 or an errno (see server_connection.h).
  // Creates `name` striped over `servers` in that order (all servers,
  // starting at the metadata server, when empty).
  int Create(const std::string& name, uint32_t stripe_size, std::vector<uint32_t> servers, OpenFile* file);
  // Creates `name` with everything on its metadata server.
  int CreateOnOneServer(const std::string& name, uint32_t stripe_size, OpenFile* file);
  // A name (prefix-N) whose metadata server is `server`: with
  // CreateOnOneServer, a file that lives wholly on that server and can still
  // be found by name like any other.
  std::string NameOnServer(const std::string& prefix, uint32_t server) const;
  int Open(const std::string& name, OpenFile* file);
  int Write(const OpenFile& file, uint64_t offset, const uint8_t* data, uint64_t length);
  // Reads [offset, offset + length); bytes past a datafile's end read as zeros.
  int Read(const OpenFile& file, uint64_t offset, uint8_t* data, uint64_t length);
  int Sync(const OpenFile& file);
  int Size(const OpenFile& file, uint64_t* size);
  int Truncate(const OpenFile& file, uint64_t local_size_per_datafile);
  // Removes the datafiles, then the directory entry and attributes.
  int Remove(const std::string& name);
  int Ping(uint32_t server, uint32_t* server_index);
  // From now on requests run to completion (or timeout) despite a stop
  // request: for the clean-up after a workload was told to stop.
  void StopWatchingInterruption();

 private:
  int CreateMetafile(const std::string& name, uint32_t metadata_server, uint32_t stripe_size,
                     const std::vector<uint32_t>& servers, OpenFile* file);
  int TransferStriped(const OpenFile& file, uint64_t offset, uint8_t* data, uint64_t length, bool write);
  std::vector<uint32_t> ServersOf(const OpenFile& file) const;

  TestbedConfig config_;
  std::vector<std::unique_ptr<ServerConnection>> connections_;
  ServerExecutor executor_;
};

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_FILE_SYSTEM_H_
