#include "limpwatch/analyzer/score_status.h"

#include <bit>
#include <iterator>

#include "limpwatch/shm/snapshot.h"

namespace limpwatch::analyzer {
namespace {

void StoreDouble(std::atomic<uint64_t>& bits, double value) {
  bits.store(std::bit_cast<uint64_t>(value), std::memory_order_relaxed);
}

uint32_t FlagsOf(const MetricScore& score) {
  return (score.anomalous ? shm::kScoreAnomalous : 0u) | (score.warming_up ? shm::kScoreWarmingUp : 0u) |
         (score.trained ? shm::kScoreTrained : 0u);
}

}  // namespace

void PublishScoreStatus(const shm::SegmentView& segment, const WindowResult& result, const std::string& server,
                        uint64_t now_unix_ms) {
  std::vector<const MetricScore*> own;
  for (const MetricScore& score : result.scores) {
    if (score.server == server && own.size() < shm::kScoreStatusEntries) own.push_back(&score);
  }
  if (own.empty()) return;
  shm::ScoreStatusBlock* block = segment.score_status();
  uint64_t sequence = block->sequence.load(std::memory_order_relaxed);
  if (sequence & 1) ++sequence;  // a writer died mid-update (not this one): start even
  block->sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  block->updated_unix_ms.store(now_unix_ms, std::memory_order_relaxed);
  block->window.store(result.window, std::memory_order_relaxed);
  block->servers_compared.store(uint32_t(result.servers.size()), std::memory_order_relaxed);
  block->metrics_listed.store(uint32_t(own.size()), std::memory_order_relaxed);
  for (size_t index = 0; index < own.size(); ++index) {
    const MetricScore& score = *own[index];
    shm::ScoreStatusEntry& entry = block->entries[index];
    shm::StoreNameWords(ComparedMetricName(score.metric), entry.metric, std::size(entry.metric));
    StoreDouble(entry.score_bits, score.score);
    StoreDouble(entry.threshold_bits, score.threshold);
    StoreDouble(entry.ratio_bits, score.ratio);
    StoreDouble(entry.sigma_bits, score.sigma);
    entry.flags.store(FlagsOf(score), std::memory_order_relaxed);
  }
  block->sequence.store(sequence + 2, std::memory_order_release);
}

}  // namespace limpwatch::analyzer
