#include "limpwatch/analyzer/verdict_board.h"

#include <algorithm>

#include "limpwatch/shm/name_hash.h"

namespace limpwatch::analyzer {

VerdictBoard::VerdictBoard(std::string self, uint64_t open_windows, uint64_t stale_windows)
    : self_(std::move(self)), open_windows_(open_windows), stale_windows_(stale_windows) {}

// As long as the diagnoser itself would not alarm the same server again.
uint64_t VerdictOpenWindows(const AnalyzerConfig& config) {
  uint64_t shift_ms = std::max<uint64_t>(uint64_t{config.shift_ticks} * config.tick_ms, 1);
  return std::max<uint64_t>((uint64_t{config.alarm_suppression_s} * 1000 + shift_ms - 1) / shift_ms, 1);
}

void VerdictBoard::AdvanceTo(uint64_t window) {
  window_ = std::max(window_, window);
  std::erase_if(own_, [&](const auto& entry) { return entry.second + open_windows_ < window_; });
  std::erase_if(peers_, [&](const auto& entry) { return !Fresh(entry.second); });
}

void VerdictBoard::Opened(const Alarm& alarm) {
  AdvanceTo(alarm.window);
  uint64_t& renewed = own_[Key{alarm.server, alarm.resource, alarm.kind}];
  renewed = std::max(renewed, alarm.window);
}

void VerdictBoard::Indicted(const std::vector<std::string>& servers, uint64_t window) {
  AdvanceTo(window);
  for (auto& [key, renewed] : own_) {
    if (std::get<2>(key) != AlarmKind::kAnomaly) continue;
    if (std::find(servers.begin(), servers.end(), std::get<0>(key)) != servers.end()) {
      renewed = std::max(renewed, window);
    }
  }
}

void VerdictBoard::Heard(const PeerSummary& summary) {
  if (summary.node == self_) return;
  PeerList& list = peers_[summary.node];
  if (summary.window < list.window) return;  // an older window, delivered late
  list.window = summary.window;
  list.carries_verdicts = summary.carries_verdicts;
  list.verdicts = summary.verdicts;
}

void VerdictBoard::Forget(const std::string& peer) { peers_.erase(peer); }

bool VerdictBoard::Fresh(const PeerList& list) const { return list.window + stale_windows_ >= window_; }

std::vector<OpenVerdict> VerdictBoard::OwnVerdicts() const {
  std::vector<std::pair<uint64_t, const Key*>> open;
  for (const auto& [key, renewed] : own_) open.emplace_back(renewed, &key);
  std::stable_sort(open.begin(), open.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<OpenVerdict> verdicts;
  for (size_t i = 0; i < open.size() && i < kMaxOpenVerdicts; ++i) {
    const auto& [server, resource, kind] = *open[i].second;
    verdicts.push_back({shm::FunctionNameHash(server), uint8_t(resource), uint8_t(kind)});
  }
  return verdicts;
}

bool VerdictBoard::HoldsOpen(const std::string& server, shm::Resource resource, AlarmKind kind) const {
  return own_.contains(Key{server, resource, kind});
}

Agreement VerdictBoard::On(const std::string& server, shm::Resource resource, AlarmKind kind,
                           const std::vector<std::string>& scorers) const {
  Agreement agreement;
  agreement.analyzers = 1;
  if (HoldsOpen(server, resource, kind)) agreement.agreeing.push_back(self_);
  OpenVerdict wanted{shm::FunctionNameHash(server), uint8_t(resource), uint8_t(kind)};
  for (const auto& [peer, list] : peers_) {
    if (!list.carries_verdicts || !Fresh(list)) continue;
    if (!scorers.empty() && std::find(scorers.begin(), scorers.end(), peer) == scorers.end()) continue;
    ++agreement.analyzers;
    if (std::find(list.verdicts.begin(), list.verdicts.end(), wanted) != list.verdicts.end()) {
      agreement.agreeing.push_back(peer);
    }
  }
  std::sort(agreement.agreeing.begin(), agreement.agreeing.end());
  return agreement;
}

}  // namespace limpwatch::analyzer
