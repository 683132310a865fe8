// Writes the fuzz seed corpus: valid datagrams of many shapes, with and
// without the fuzz key's tag, one file each, into the directory given.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz_key.h"
#include "limpwatch/analyzer/peer_wire.h"
#include "peer/summary_builder.h"

int main(int argc, char** argv) {
  using namespace limpwatch::analyzer;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  const std::string directory = argv[1];
  struct Shape {
    const char* node;
    size_t features;
    size_t metrics;
  };
  const Shape shapes[] = {{"a", 0, 0},        {"server1", 0, 3},   {"server2", 1, 1},
                          {"server-3", 10, 2}, {"server_4", 50, 3}, {"pvfs-server-with-a-long-name.rack17", 200, 3}};
  int written = 0;
  uint32_t seed = 1;
  for (const Shape& shape : shapes) {
    for (bool tagged : {false, true}) {
      PeerSummary summary = testing::MakeSummary(
          {.node = shape.node, .features = shape.features, .metrics = shape.metrics, .seed = seed++});
      // Open verdicts of as many shapes: none, some, the most a datagram carries;
      // and one minor-0 datagram, which has no verdict list.
      size_t verdicts = (seed % 3 == 0) ? kMaxOpenVerdicts : seed % 3;
      for (size_t i = 0; i < verdicts; ++i) {
        summary.verdicts.push_back({0x9E3779B97F4A7C15ull * (i + seed), uint8_t(i % 6), uint8_t(i % 4)});
      }
      if (shape.features == 1) {
        summary.verdicts.clear();
        summary.carries_verdicts = false;
      }
      std::vector<uint8_t> bytes;
      if (EncodeSummary(summary, tagged ? &fuzzing::FuzzKey() : nullptr, &bytes) != EncodeError::kNone) {
        std::fprintf(stderr, "seed %s could not be encoded\n", shape.node);
        return 1;
      }
      std::string path = directory + "/seed-" + std::to_string(written++) + (tagged ? "-tagged" : "") + ".bin";
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        return 1;
      }
    }
  }
  std::printf("wrote %d seed datagrams to %s\n", written, directory.c_str());
  return 0;
}
