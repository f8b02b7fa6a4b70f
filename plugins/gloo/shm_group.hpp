// Same-host collectives over shared memory, for a gloo communicator whose
// ranks all run on one machine (the common CPU data-parallel job: N
// processes on one box). gloo's TCP transport costs a 340 KB all_reduce
// ~0.4 ms on loopback — two syscalls and a wakeup per message, copies in
// the kernel — while a shared segment does it in ~0.05 ms: each rank copies
// its input into its slot, reduces its 1/N of the slots into a result area,
// and copies the result out, with two barriers per chunk.
//
// all_reduce (and reduce_scatter and reduce, done as one), broadcast and
// barrier take this path (what DDP issues every step); the other
// collectives stay on gloo. It is chosen at communicator
// creation when every rank reports the same boot id and the same IPC,
// mount, PID and network namespaces (so two network namespaces are two
// machines, as in the two-node test), and every rank mapped the segment;
// LOOM_GLOO_SHM=0 on any rank keeps every rank on TCP.
//
// Failures are errors, never hangs: a wait gives up at the collective's
// timeout or when the communicator is aborted, and a peer whose process
// has exited is named within ~10 ms. Ranks that issue different
// collectives at one sequence number (op, dtype or sizes differ: the
// host's signature) fail at once on every rank. A failure ends the group
// on every rank (the ranks are out of step after it): later collectives
// fail at once, naming the rank that failed first.
#pragma once

#include "reduce_functions.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gloo::rendezvous {
class Store;
}

namespace loom::gloo_plugin {

class ShmGroup {
 public:
  using Clock = std::chrono::steady_clock;

  // Collective over the ranks of a new communicator (each calls it once,
  // after gloo's rendezvous, through the same store). nullptr when the
  // ranks do not all share this host, when it is switched off, or when a
  // segment could not be made or mapped on some rank — only that failure
  // sets *why_not (naming the rank and the reason).
  static std::unique_ptr<ShmGroup> create(gloo::rendezvous::Store& store, int rank, int size,
                                          std::chrono::milliseconds timeout, std::string* why_not);
  ~ShmGroup();
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  // The collectives, on count > 0 elements (bytes > 0). `sequence` and
  // `signature` are the host's (comm_api.h): equal on every rank for the
  // same collective. They throw plugin::Failure
  // naming the rank for desynchronised ranks, a peer that exited, the
  // deadline, or an abort.
  void all_reduce(char* data, size_t count, size_t item, const ReduceFn& reduce, uint64_t sequence,
                  uint64_t signature, Clock::time_point deadline);
  void broadcast(char* data, size_t bytes, int root, uint64_t sequence, uint64_t signature,
                 Clock::time_point deadline);
  void barrier(uint64_t sequence, uint64_t signature, Clock::time_point deadline);

  // Makes every wait in progress or to come fail (Comm::abort).
  void abort() { aborted_.store(true); }

  size_t slot_bytes() const { return slot_bytes_; }

 private:
  struct Control;
  struct Shared;
  ShmGroup(int rank, int size, char* base, size_t mapped, size_t slot_bytes, std::vector<int> pids);

  Shared& shared() const;
  Control& control(int r) const;
  // Ends the group on every rank (see the .cpp) and throws `message`.
  [[noreturn]] void fail(const std::string& message);
  // Throws when a collective of the group failed earlier, on any rank.
  void throw_if_failed(const char* op);
  char* slot(int r) const;  // r == size_: the result area
  // This rank's (sequence, signature), for enter() on the other ranks.
  void publish(uint64_t sequence, uint64_t signature);
  // Waits for every rank and checks they all published the same.
  void enter(const char* op, uint64_t sequence, uint64_t signature, Clock::time_point deadline);
  void arrive_and_wait(const char* op, Clock::time_point deadline);

  const int rank_, size_;
  char* const base_;
  const size_t mapped_, slot_bytes_;
  const std::vector<int> pids_;  // of each rank's process: who exited
  uint32_t generation_ = 0;      // barriers this rank has entered
  bool broken_ = false;          // a collective failed here: the group is out of step
  std::atomic<bool> aborted_{false};
};

}  // namespace loom::gloo_plugin
