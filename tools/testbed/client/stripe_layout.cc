#include "client/stripe_layout.h"

#include <algorithm>

namespace limpwatch::testbed::client {

std::vector<std::vector<LocalRun>> MapLogicalRange(const FileLayout& layout, uint64_t offset, uint8_t* buffer,
                                                   uint64_t length) {
  const uint64_t stripe = layout.stripe_size;
  const uint64_t count = layout.datafiles.size();
  std::vector<std::vector<LocalRun>> runs(count);
  uint64_t done = 0;
  while (done < length) {
    uint64_t logical = offset + done;
    uint64_t unit = logical / stripe;
    uint64_t within = logical % stripe;
    uint64_t piece_length = std::min(stripe - within, length - done);
    size_t datafile = static_cast<size_t>(unit % count);
    uint64_t local = (unit / count) * stripe + within;
    auto& datafile_runs = runs[datafile];
    IoPiece piece{buffer + done, static_cast<size_t>(piece_length)};
    if (!datafile_runs.empty()) {
      LocalRun& last = datafile_runs.back();
      if (last.local_offset + last.length == local) {
        last.pieces.push_back(piece);
        last.length += piece_length;
        done += piece_length;
        continue;
      }
    }
    datafile_runs.push_back({local, piece_length, {piece}});
    done += piece_length;
  }
  return runs;
}

uint64_t LogicalEndOfDatafile(const FileLayout& layout, size_t index, uint64_t local_size) {
  if (local_size == 0) return 0;
  const uint64_t stripe = layout.stripe_size;
  const uint64_t count = layout.datafiles.size();
  uint64_t last = local_size - 1;
  uint64_t row = last / stripe;
  uint64_t within = last % stripe;
  return (row * count + index) * stripe + within + 1;
}

}  // namespace limpwatch::testbed::client
