#include "limpwatch/analyzer/peer_counters.h"

namespace limpwatch::analyzer {

uint64_t PeerCounters::TotalRejected() const {
  uint64_t total = 0;
  for (size_t i = 1; i < rejected.size(); ++i) total += rejected[i];
  return total;
}

uint64_t PeerCounters::Malformed() const {
  uint64_t total = 0;
  for (size_t i = 1; i < rejected.size(); ++i) {
    if (IsMalformed(static_cast<DecodeError>(i))) total += rejected[i];
  }
  return total;
}

std::string PeerCounters::ToString() const {
  std::string text = "summaries_sent=" + std::to_string(summaries_sent) + " sends=" + std::to_string(sends) +
                     " send_errors=" + std::to_string(send_errors) + " encode_errors=" + std::to_string(encode_errors) +
                     " received=" + std::to_string(received) + " accepted=" + std::to_string(accepted) +
                     " accepted_unverified=" + std::to_string(accepted_unverified) +
                     " new_streams=" + std::to_string(new_streams) + " receive_errors=" + std::to_string(receive_errors) +
                     " internal_errors=" + std::to_string(internal_errors) +
                     " senders_forgotten=" + std::to_string(senders_forgotten);
  for (size_t i = 1; i < rejected.size(); ++i) {
    if (rejected[i] != 0) {
      text += " rejected.";
      text += DecodeErrorName(static_cast<DecodeError>(i));
      text += "=" + std::to_string(rejected[i]);
    }
  }
  return text;
}

}  // namespace limpwatch::analyzer
