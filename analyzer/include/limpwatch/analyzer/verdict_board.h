// Which analyzers of a cluster hold the same alarm open.
//
// Every server's analyzer judges the whole cluster, so a limping server is
// indicted by several of them, each on its own. Each tells its peers, in
// every summary it sends, the verdicts it holds open (wire minor 1: the
// indicted server's name hash, the resource, the kind); the board keeps the
// newest list of each peer and says, for an alarm, which analyzers hold it
// open and of how many whose word is known: "held by 4 of 4". An operator on
// any one node sees how far the cluster agrees without reading the others.
//
// Everything is counted in windows, so the board needs no constant of its
// own: one of this analyzer's verdicts stays open for the alarm suppression
// period after the server was last indicted (or, for kinds that are not
// re-judged every window, alarmed); a peer's list counts while the peer is
// not silent by the diagnoser's own rule (peer_silence_windows). A peer of
// wire minor 0 sends no list and is not counted. Peers' lists lag one
// window: a peer's summary of window w leaves before it compares window w.
#ifndef LIMPWATCH_ANALYZER_VERDICT_BOARD_H_
#define LIMPWATCH_ANALYZER_VERDICT_BOARD_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "limpwatch/analyzer/alarm.h"
#include "limpwatch/analyzer/analyzer_config.h"
#include "limpwatch/analyzer/peer_summary.h"

namespace limpwatch::analyzer {

struct Agreement {
  std::vector<std::string> agreeing;  // the analyzers holding it open, sorted by name
  uint32_t analyzers = 0;             // this one and the fresh peers that send their verdicts
};

// How many windows an alarm's verdict stays open without being renewed: the
// alarm suppression period, in windows.
uint64_t VerdictOpenWindows(const AnalyzerConfig& config);

class VerdictBoard {
 public:
  VerdictBoard(std::string self, uint64_t open_windows, uint64_t stale_windows);

  // The newest window this analyzer compared: verdicts and lists age by it.
  void AdvanceTo(uint64_t window);
  // An alarm this analyzer raised opens its verdict (server, resource, kind).
  void Opened(const Alarm& alarm);
  // Servers indicted in `window` keep their open anomaly verdicts open.
  void Indicted(const std::vector<std::string>& servers, uint64_t window);
  // A peer's summary: its verdict list replaces the one before.
  void Heard(const PeerSummary& summary);
  // A peer that left the configuration: its verdicts no longer count.
  void Forget(const std::string& peer);

  // This analyzer's open verdicts, most recently renewed first, at most
  // kMaxOpenVerdicts: what its next summary carries.
  std::vector<OpenVerdict> OwnVerdicts() const;
  bool HoldsOpen(const std::string& server, shm::Resource resource, AlarmKind kind) const;
  // `scorers`: the analyzers that compare `server` (its comparison group and
  // itself); only they count, of the ones heard. Empty: every one heard does
  // (a cluster within one group).
  Agreement On(const std::string& server, shm::Resource resource, AlarmKind kind,
               const std::vector<std::string>& scorers = {}) const;

 private:
  using Key = std::tuple<std::string, shm::Resource, AlarmKind>;
  struct PeerList {
    uint64_t window = 0;
    bool carries_verdicts = false;
    std::vector<OpenVerdict> verdicts;
  };
  bool Fresh(const PeerList& list) const;

  std::string self_;
  uint64_t open_windows_;
  uint64_t stale_windows_;
  uint64_t window_ = 0;
  std::map<Key, uint64_t> own_;  // verdict -> the window it was last renewed in
  std::unordered_map<std::string, PeerList> peers_;
};

}  // namespace limpwatch::analyzer

#endif  // LIMPWATCH_ANALYZER_VERDICT_BOARD_H_
