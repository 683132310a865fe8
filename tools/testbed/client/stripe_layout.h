// simple_stripe: how a file's bytes spread over its datafiles.
//
// Stripe unit u of the file (bytes [u*S, (u+1)*S)) lives on datafile
// u mod N, at local offset (u div N)*S. Consecutive units of one datafile are
// adjacent on it, so a large sequential request becomes one contiguous local
// run per server: one WRITE or READ per server, all servers in parallel.
#ifndef LIMPWATCH_TOOLS_TESTBED_CLIENT_STRIPE_LAYOUT_H_
#define LIMPWATCH_TOOLS_TESTBED_CLIENT_STRIPE_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "client/server_connection.h"

namespace limpwatch::testbed::client {

struct DatafileRef {
  uint64_t handle = 0;
  uint32_t server = 0;
};

struct FileLayout {
  uint32_t stripe_size = 0;
  std::vector<DatafileRef> datafiles;  // stripe order
};

// Consecutive local bytes of one datafile and where they sit in the caller's buffer.
struct LocalRun {
  uint64_t local_offset = 0;
  uint64_t length = 0;  // sum of the pieces
  std::vector<IoPiece> pieces;
};

// For the logical range [offset, offset + length) held in `buffer`: the runs
// of each datafile (indexed like layout.datafiles), merged where adjacent.
std::vector<std::vector<LocalRun>> MapLogicalRange(const FileLayout& layout, uint64_t offset, uint8_t* buffer,
                                                   uint64_t length);

// The logical file size implied by datafile `index` holding `local_size` bytes.
uint64_t LogicalEndOfDatafile(const FileLayout& layout, size_t index, uint64_t local_size);

}  // namespace limpwatch::testbed::client

#endif  // LIMPWATCH_TOOLS_TESTBED_CLIENT_STRIPE_LAYOUT_H_
