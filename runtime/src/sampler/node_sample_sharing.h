// One set of per-CPU sampling events for all the traced processes of a node.
//
// Why: a per-CPU event fires `rate` timer interrupts a second on its CPU
// whoever runs there, and each traced process used to open its own set and
// keep only its own samples: a node with 4 servers took 4 times the
// interrupts of a node with one, each server paying for its neighbours'
// sampling. Now the processes of one user sampling at one rate share one
// set. Whichever holds the node's lease (a word in a small control file)
// opens the events, keeps its own samples and files every other member's
// into that member's inbox (sample_inbox.h); the others open no event and
// read their inbox.
//
// Why a lease and not a lock the kernel releases (flock): a holder can stop
// without dying. The test-bed's hang fault SIGSTOPs a server, a CPU-hog
// starves it; a lock would stay with it and every other server of the node
// would go without samples for as long. The holder renews the lease at each
// read (a heartbeat, CLOCK_MONOTONIC, which every process of the node
// shares); a member takes it over when it is free, when its holder has
// died (no such pid, or a zombie), or when the heartbeat is older than
// kStaleLeaseNs.
// A holder that finds its lease taken keeps its own samples from its rings
// and closes its events, a member from then on; the other members' samples
// in its rings are dropped: no one can tell which of them the new holder
// also has. The holder's exit frees the lease and wakes the members at once.
//
// The control file also carries two futex words, so nobody polls:
// - `flush_requests`: a member about to exit asks the holder to read the
//   rings now (its last samples are still in the kernel's rings) and waits
//   until `flushes_served` says a read that started after its request has
//   finished; the holder's reader thread waits on `flush_requests` between
//   its periodic reads.
// - `holder_changes`: members wait on it between reads; a holder that
//   frees the lease bumps it and wakes them, so one takes over within
//   milliseconds rather than at its next periodic read.
//
// Processes of another user, PID namespace or rate use other files and do
// not share (an inbox's owner must be able to trust the holder, pids must
// mean the same process to all, and every member must get samples at the
// rate it published).
#ifndef LIMPWATCH_RUNTIME_SRC_SAMPLER_NODE_SAMPLE_SHARING_H_
#define LIMPWATCH_RUNTIME_SRC_SAMPLER_NODE_SAMPLE_SHARING_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sampler/sample_inbox.h"

namespace limpwatch::runtime {

inline constexpr uint64_t kSharingMagic = 0x6572616853706d53ull;  // "SmpShare"
inline constexpr uint32_t kSharingVersion = 1;
// A holder's reader renews the lease every 100 ms; ten missed renewals is a
// holder stopped or starved, not one that is late (the rings hold 2 s, so
// its samples are not lost yet either).
inline constexpr long kStaleLeaseNs = 1'000'000'000;

struct SharingControl {
  std::atomic<uint64_t> magic;
  std::atomic<uint32_t> version;
  std::atomic<uint32_t> holder_changes;  // futex word
  std::atomic<uint64_t> lease;           // holder pid (low half, 0: free) and a take-over count (high half)
  std::atomic<int64_t> heartbeat_ns;     // CLOCK_MONOTONIC of the holder's last renewal
  std::atomic<uint32_t> flush_requests;  // futex word
  std::atomic<uint32_t> flushes_served;  // futex word: the requests a finished read covered
  std::atomic<uint32_t> joins;           // bumped by each member that publishes its inbox
};

// Who may share: the processes of this effective user in this PID
// namespace, "UID.PIDNS" (the namespace's inode; perf reports pids as the
// reader's namespace sees them, and a holder judges a lease by its pid).
std::string SharingScope();

// The control file of the events shared in `scope` at `rate_hz`:
// "limpwatch-sampler.SCOPE.RATE".
std::string SharingControlFileName(const std::string& scope, uint32_t rate_hz);

class NodeSampleSharing {
 public:
  // Joins the sharing of `scope`'s processes at `rate_hz` in `directory`
  // (/dev/shm on a node): opens the control file and publishes this
  // process's inbox. Returns null with a one-line *error.
  static std::unique_ptr<NodeSampleSharing> Join(const std::string& directory, const std::string& scope, uint32_t rate_hz,
                                                 pid_t pid, uint32_t inbox_capacity, std::string* error);
  ~NodeSampleSharing();  // gives up the events if held (waking the members), removes the inbox
  NodeSampleSharing(const NodeSampleSharing&) = delete;
  NodeSampleSharing& operator=(const NodeSampleSharing&) = delete;

  // Takes the lease if it is free, its holder dead, or stale. True when
  // this process holds it (now or already): it must then open the events,
  // or Release().
  bool TryTakeOver();
  bool holder() const { return holder_; }
  // Holder: whether the lease is still this process's. False once another
  // took it over: this process is a member from then on.
  bool StillHolder();
  // Gives up the lease and wakes the members, one of which takes over.
  void Release();
  // Release(), the inbox removed, and the control file too when this was
  // the last process taking part; the control file stays mapped, so a
  // thread still waiting in Wait() is not left on unmapped memory (at exit).
  void Leave();

  // Holder: files a sample of process `pid`; ignored unless `pid` is a
  // member whose inbox is attached. Returns whether it was filed.
  bool Deliver(uint32_t pid, const SharedSample& sample);
  // Holder: samples the kernel dropped in the shared rings; they may have
  // been anyone's, so every member counts them.
  void DeliverLost(uint64_t samples);
  // Holder, before reading the rings: notes the flush requests this read
  // covers, and looks for members (Rescan) on the first round, when one has
  // joined since (so its samples still in the rings reach it), and every
  // `rescan_every` rounds (to forget those that left). Returns Rescan's
  // problems.
  std::vector<std::string> BeginRound(uint32_t rescan_every);
  // Holder, after: renews the lease, publishes the requests served and
  // wakes who waits.
  void EndRound();
  // Looks for new inboxes and drops those whose reader has gone. Returns one
  // line for each inbox that cannot be attached, once per file.
  std::vector<std::string> Rescan();
  size_t member_count() const { return outboxes_.size(); }

  // Everyone: this process's samples filed by a holder, see SampleInbox::Drain.
  size_t DrainInbox(const std::function<void(const SharedSample&)>& visit, uint64_t* lost);

  // Between reads, at most `timeout_ns`: a holder wakes early for a flush
  // request, a member when the holder changes. In two steps, so that a
  // reader thread can take what to wait for under its lock (the exit path
  // changes this object under that lock) and wait without it: WaitFor
  // touches nothing but the control file's mapping, which Leave() keeps.
  struct WaitTicket {
    std::atomic<uint32_t>* word = nullptr;  // null: do not wait
    uint32_t expected = 0;
  };
  WaitTicket PrepareWait() const;
  static void WaitFor(const WaitTicket& ticket, long timeout_ns);
  void Wait(long timeout_ns) { WaitFor(PrepareWait(), timeout_ns); }

  // Member: asks the holder to read the rings now and waits, at most
  // `timeout_ns`, until it has. False when nobody answered in time.
  bool RequestFlush(long timeout_ns);

  // In a forked child: closes and unmaps the child's copies of everything,
  // leaving the parent's lease, inbox and the members' files alone.
  void ReleaseAfterFork();

 private:
  NodeSampleSharing() = default;

  void RemoveIfLast();

  std::string directory_;
  std::string control_path_;
  bool left_ = true;  // until joined: a Join that fails removes nothing
  std::string scope_;
  uint32_t rate_hz_ = 0;
  pid_t pid_ = 0;
  int control_fd_ = -1;
  SharingControl* control_ = nullptr;
  bool holder_ = false;
  uint64_t lease_ = 0;  // the lease value this process took
  uint32_t round_requests_ = 0;
  uint64_t rounds_ = 0;
  uint32_t joins_seen_ = 0;
  std::unique_ptr<SampleInbox> inbox_;
  std::unordered_map<uint32_t, std::unique_ptr<SampleOutbox>> outboxes_;
  std::unordered_set<std::string> refused_;  // inboxes that failed to attach, said once
};

}  // namespace limpwatch::runtime

#endif  // LIMPWATCH_RUNTIME_SRC_SAMPLER_NODE_SAMPLE_SHARING_H_
