#include "limpwatch/analyzer/peer_replay.h"

#include <algorithm>

namespace limpwatch::analyzer {

ReplayGuard::ReplayGuard(size_t max_senders) : max_senders_(std::max<size_t>(max_senders, 1)) {}

bool ReplayGuard::IsRetired(const Stream& stream, uint64_t boot_id) const {
  size_t kept = std::min(stream.retired_count, stream.retired_boots.size());
  return std::find(stream.retired_boots.begin(), stream.retired_boots.begin() + kept, boot_id) !=
         stream.retired_boots.begin() + kept;
}

void ReplayGuard::EvictLeastRecent() {
  // A linear scan: evictions need a new node beyond max_senders, which only a
  // configured (and, with a key, authenticated) sender can cause.
  auto oldest = std::min_element(senders_.begin(), senders_.end(), [](const auto& a, const auto& b) {
    return a.second.last_admitted < b.second.last_admitted;
  });
  if (oldest != senders_.end()) {
    senders_.erase(oldest);
    ++evictions_;
  }
}

ReplayGuard::Verdict ReplayGuard::Admit(const PeerSummary& summary) {
  auto found = senders_.find(summary.node);
  if (found == senders_.end()) {
    if (senders_.size() >= max_senders_) EvictLeastRecent();
    Stream& stream = senders_[summary.node];
    stream.boot_id = summary.boot_id;
    stream.last_window = summary.window;
    stream.last_window_end_unix_ms = summary.window_end_unix_ms;
    stream.last_admitted = ++admissions_;
    return Verdict::kNewStream;
  }

  Stream& stream = found->second;
  if (summary.boot_id == stream.boot_id) {
    if (summary.window <= stream.last_window) return Verdict::kReplayed;
    stream.last_window = summary.window;
    stream.last_window_end_unix_ms = std::max(stream.last_window_end_unix_ms, summary.window_end_unix_ms);
    stream.last_admitted = ++admissions_;
    return Verdict::kAccepted;
  }

  if (IsRetired(stream, summary.boot_id) || summary.window_end_unix_ms <= stream.last_window_end_unix_ms) {
    return Verdict::kStaleBoot;
  }
  stream.retired_boots[stream.retired_count % stream.retired_boots.size()] = stream.boot_id;
  ++stream.retired_count;
  stream.boot_id = summary.boot_id;
  stream.last_window = summary.window;
  stream.last_window_end_unix_ms = summary.window_end_unix_ms;
  stream.last_admitted = ++admissions_;
  return Verdict::kNewStream;
}

DecodeError RejectionOf(ReplayGuard::Verdict verdict) {
  switch (verdict) {
    case ReplayGuard::Verdict::kReplayed: return DecodeError::kReplayed;
    case ReplayGuard::Verdict::kStaleBoot: return DecodeError::kStaleBoot;
    case ReplayGuard::Verdict::kAccepted:
    case ReplayGuard::Verdict::kNewStream: return DecodeError::kNone;
  }
  return DecodeError::kNone;
}

}  // namespace limpwatch::analyzer
