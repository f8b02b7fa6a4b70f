// ShmGroup (shm_group.hpp).
//
// The segment: one page of header (a Control per rank, each on its own
// cache lines), then size + 1 slots of slot_bytes — one per rank and the
// result area. A barrier is a per-rank counter (the futex word) each rank
// increments on arrival and the others wait for; waits sleep in the kernel
// (FUTEX_WAIT on the shared word) in 10 ms slices, checking the deadline,
// the abort flag and, after a slice without progress, whether the awaited
// rank's process still exists.
#include "shm_group.hpp"

#include <loom/plugin.hpp>

#include <gloo/rendezvous/store.h>

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <utility>

namespace loom::gloo_plugin {

struct ShmGroup::Control {
  alignas(64) std::atomic<uint32_t> arrived;  // barriers this rank entered (the futex word)
  std::atomic<uint64_t> sequence;             // of the collective it entered last
  std::atomic<uint64_t> signature;
};

// The segment's first bytes: whether some rank's collective failed.
struct ShmGroup::Shared {
  alignas(64) std::atomic<int32_t> failed;  // 1 + the first rank whose collective failed; 0 while none
};
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free,
              "the shared counters must be lock-free to work across processes");

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kControlBytes = 128;  // two cache lines: no false sharing between ranks
constexpr size_t kSharedBytes = 128;   // ShmGroup::Shared, then the Controls
constexpr size_t kMaxSlotBytes = size_t{4} << 20;
constexpr size_t kMinSlotBytes = size_t{256} << 10;
constexpr size_t kSegmentBudget = size_t{32} << 20;  // /dev/shm is 64 MiB in a default container

size_t header_bytes(int size) {
  return (kSharedBytes + static_cast<size_t>(size) * kControlBytes + kPage - 1) / kPage * kPage;
}

// Slots shrink as the world grows, so the segment stays within the budget.
size_t slot_bytes_for(int size) {
  const size_t share = kSegmentBudget / static_cast<size_t>(size + 1) / kPage * kPage;
  return std::clamp(share, kMinSlotBytes, kMaxSlotBytes);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string namespace_of(const char* ns) {
  char buf[128];
  const std::string link = std::string("/proc/self/ns/") + ns;
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
}

// What must be equal for two processes to share a segment by name and to
// see each other's pids — and, by choice, the network namespace: two of
// them are two machines (the two-node test), which talk over TCP.
std::string host_identity() {
  std::string id = read_first_line("/proc/sys/kernel/random/boot_id");
  for (const char* ns : {"ipc", "mnt", "pid", "net"}) id.append(" ").append(namespace_of(ns));
  return id;
}

// False once the process has exited (gone, or a zombie not yet reaped).
bool process_alive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X';
}

std::string get_string(gloo::rendezvous::Store& store, const std::string& key, std::chrono::milliseconds timeout) {
  store.wait({key}, timeout);
  const std::vector<char> v = store.get(key);
  return std::string(v.begin(), v.end());
}

void set_string(gloo::rendezvous::Store& store, const std::string& key, const std::string& value) {
  store.set(key, std::vector<char>(value.begin(), value.end()));
}

std::string segment_name() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  std::ostringstream s;
  s << "/loom-gloo-" << ::getpid() << "-" << counter++ << "-" << std::hex << ((uint64_t{rd()} << 32) | rd());
  return s.str();
}

// Names a rendezvous left behind when its rank 0 was killed between
// creating the segment and unlinking it (each holds its reserved memory):
// removed when their creator's process is gone.
void remove_stale_segments() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("loom-gloo-", 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + 10);
    if (pid > 0 && !process_alive(pid)) ::shm_unlink(("/" + name).c_str());
  }
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Maps `bytes` of the named segment; creates it (exclusively, its memory
// reserved up front so a full /dev/shm fails here, not as SIGBUS later)
// when `create`. nullptr and *why on failure.
char* map_segment(const std::string& name, size_t bytes, bool create, std::string* why) {
  const int fd = ::shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) {
    *why = errno_text(("shm_open " + name).c_str());
    return nullptr;
  }
  char* base = nullptr;
  if (create) {
    if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      *why = errno_text("ftruncate");
    } else if (const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); rc != 0) {
      *why = "reserving " + std::to_string(bytes >> 20) + " MiB in /dev/shm: " + std::strerror(rc);
    }
  } else {
    struct stat st {};
    if (::fstat(fd, &st) != 0) *why = errno_text("fstat");
    else if (static_cast<size_t>(st.st_size) != bytes)
      *why = "the segment has " + std::to_string(st.st_size) + " bytes, not " + std::to_string(bytes);
  }
  if (why->empty()) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) *why = errno_text("mmap");
    else base = static_cast<char*>(p);
  }
  ::close(fd);
  if (!base && create) ::shm_unlink(name.c_str());
  return base;
}

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

std::unique_ptr<ShmGroup> ShmGroup::create(gloo::rendezvous::Store& store, int rank, int size,
                                           std::chrono::milliseconds timeout, std::string* why_not) {
  why_not->clear();
  if (size < 2) return nullptr;  // every collective is local
  const char* env = std::getenv("LOOM_GLOO_SHM");
  const bool off = env && std::string(env) == "0";
  // A rank that switched it off reports an identity no other rank has.
  const std::string mine = off ? "off " + std::to_string(rank) : host_identity();
  set_string(store, "loom_shm/host/" + std::to_string(rank), mine + "\n" + std::to_string(::getpid()));
  std::vector<int> pids(static_cast<size_t>(size));
  bool same_host = true;
  for (int r = 0; r < size; ++r) {
    const std::string rec = get_string(store, "loom_shm/host/" + std::to_string(r), timeout);
    const size_t nl = rec.find('\n');
    same_host = same_host && rec.substr(0, nl) == mine;
    pids[static_cast<size_t>(r)] = nl == std::string::npos ? 0 : std::atoi(rec.c_str() + nl + 1);
  }
  if (!same_host) return nullptr;  // several hosts (or switched off): TCP, nothing to report

  const size_t slot = slot_bytes_for(size);
  const size_t bytes = header_bytes(size) + static_cast<size_t>(size + 1) * slot;
  std::string why;
  std::string name;
  // Whatever happens below (a store timeout included), rank 0 unlinks the
  // name on the way out and a rank that does not end up with a group
  // unmaps: nothing outlives a failed rendezvous.
  struct Segment {
    char* base = nullptr;
    size_t bytes = 0;
    std::string unlink;
    ~Segment() {
      if (!unlink.empty()) ::shm_unlink(unlink.c_str());
      if (base) ::munmap(base, bytes);
    }
  } segment;
  segment.bytes = bytes;
  if (rank == 0) {
    remove_stale_segments();
    name = segment_name();
    segment.base = map_segment(name, bytes, true, &why);
    if (segment.base) segment.unlink = name;
    set_string(store, "loom_shm/name", segment.base ? name : "!" + why);
  } else {
    const std::string got = get_string(store, "loom_shm/name", timeout);
    if (!got.empty() && got[0] == '!') why = "rank 0: " + got.substr(1);
    else segment.base = map_segment(name = got, bytes, false, &why);
  }
  // Everyone says whether it mapped the segment; once rank 0 has read every
  // answer nobody opens it by name again, so it unlinks it (the memory
  // lives until the last process unmaps it, or exits).
  // ("+", or "-" and why: a store may refuse empty values.)
  set_string(store, "loom_shm/mapped/" + std::to_string(rank), why.empty() ? "+" : "-" + why);
  std::string failures;
  for (int r = 0; r < size; ++r) {
    const std::string theirs = get_string(store, "loom_shm/mapped/" + std::to_string(r), timeout);
    if (theirs != "+" && failures.empty()) failures = "rank " + std::to_string(r) + ": " + theirs.substr(1);
  }
  if (!failures.empty()) {
    *why_not = failures;
    return nullptr;
  }
  std::unique_ptr<ShmGroup> group(new ShmGroup(rank, size, segment.base, bytes, slot, std::move(pids)));
  segment.base = nullptr;  // the group's now
  return group;
}

ShmGroup::ShmGroup(int rank, int size, char* base, size_t mapped, size_t slot_bytes, std::vector<int> pids)
    : rank_(rank), size_(size), base_(base), mapped_(mapped), slot_bytes_(slot_bytes), pids_(std::move(pids)) {}

ShmGroup::~ShmGroup() { ::munmap(base_, mapped_); }

ShmGroup::Shared& ShmGroup::shared() const { return *reinterpret_cast<Shared*>(base_); }

ShmGroup::Control& ShmGroup::control(int r) const {
  return *reinterpret_cast<Control*>(base_ + kSharedBytes + static_cast<size_t>(r) * kControlBytes);
}

char* ShmGroup::slot(int r) const { return base_ + header_bytes(size_) + static_cast<size_t>(r) * slot_bytes_; }

void ShmGroup::arrive_and_wait(const char* op, Clock::time_point deadline) {
  const uint32_t target = ++generation_;
  Control& me = control(rank_);
  me.arrived.store(target, std::memory_order_release);
  futex(&me.arrived, FUTEX_WAKE, INT32_MAX, nullptr);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    std::atomic<uint32_t>& word = control(r).arrived;
    auto reached = [&](uint32_t v) { return static_cast<int32_t>(v - target) >= 0; };
    // A short spin first: the peer is often a few microseconds behind, and
    // sleeping costs a wakeup of the same order.
    bool done = false;
    for (int spin = 0; spin < 64 && !(done = reached(word.load(std::memory_order_acquire))); ++spin)
      cpu_relax();
    while (!done) {
      const uint32_t seen = word.load(std::memory_order_acquire);
      if ((done = reached(seen))) break;
      throw_if_failed(op);
      if (aborted_.load()) fail(std::string(op) + ": the communicator was aborted");
      const auto now = Clock::now();
      if (now >= deadline)
        fail(std::string(op) + ": rank " + std::to_string(rank_) + " timed out waiting for rank " +
             std::to_string(r) + " (stuck before this collective, or in another one)");
      const auto left = std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(10));
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      const timespec slice{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
      if (futex(&word, FUTEX_WAIT, seen, &slice) != 0 && errno == ETIMEDOUT && !process_alive(pids_[r]) &&
          !reached(word.load(std::memory_order_acquire)))
        fail(std::string(op) + ": rank " + std::to_string(r) + " (pid " + std::to_string(pids_[r]) +
             ") exited without joining it");
    }
  }
}

// A rank whose wait failed has left the barrier sequence the others
// follow: its next collective would pair its barriers with the wrong ones
// of theirs (and they would read its slot while it writes the next
// input). So a failure ends the group for every rank: this rank's later
// collectives refuse at once, and the others' fail at their next wait
// (woken now) or collective.
void ShmGroup::fail(const std::string& message) {
  broken_ = true;
  int32_t none = 0;
  shared().failed.compare_exchange_strong(none, rank_ + 1);
  for (int r = 0; r < size_; ++r) futex(&control(r).arrived, FUTEX_WAKE, INT32_MAX, nullptr);
  throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, message + " (same-host shared memory)");
}

void ShmGroup::throw_if_failed(const char* op) {
  const int32_t failed = shared().failed.load(std::memory_order_acquire);
  if (!broken_ && failed == 0) return;
  broken_ = true;
  const std::string who = failed == 0 || failed == rank_ + 1 ? "this rank" : "rank " + std::to_string(failed - 1);
  throw plugin::Failure(LOOM_STATUS_DEVICE_ERROR, std::string(op) + ": a collective of this group failed on " + who +
                                                      " earlier, so the ranks are out of step; make a new group "
                                                      "(same-host shared memory)");
}

void ShmGroup::enter(const char* op, uint64_t sequence, uint64_t signature, Clock::time_point deadline) {
  arrive_and_wait(op, deadline);
  for (int r = 0; r < size_; ++r) {
    const Control& c = control(r);
    const uint64_t seq = c.sequence.load(std::memory_order_relaxed);
    const uint64_t sig = c.signature.load(std::memory_order_relaxed);
    if (seq != sequence || sig != signature)
      fail(std::string(op) + ": rank " + std::to_string(r) + " entered collective " + std::to_string(seq) +
           " with another op, dtype or size than rank " + std::to_string(rank_) + "'s collective " +
           std::to_string(sequence) + " (desynchronised)");
  }
}

// Published before the barrier that enter() checks after: a rank cannot
// publish its next collective before every rank has passed the barrier
// that ends this one, so what each rank reads is what the others entered.
void ShmGroup::publish(uint64_t sequence, uint64_t signature) {
  control(rank_).sequence.store(sequence, std::memory_order_relaxed);
  control(rank_).signature.store(signature, std::memory_order_relaxed);
}

void ShmGroup::all_reduce(char* data, size_t count, size_t item, const ReduceFn& reduce, uint64_t sequence,
                          uint64_t signature, Clock::time_point deadline) {
  throw_if_failed("all_reduce");
  publish(sequence, signature);
  const size_t per_chunk = slot_bytes_ / item;
  char* result = slot(size_);
  for (size_t first = 0; first < count; first += per_chunk) {
    const size_t n = std::min(per_chunk, count - first);
    char* mine = data + first * item;
    // My slot was last read before the previous barrier pair ended, and
    // the result area is written only after everyone copied it out.
    std::memcpy(slot(rank_), mine, n * item);
    if (first == 0) enter("all_reduce", sequence, signature, deadline);
    else arrive_and_wait("all_reduce", deadline);
    // This rank reduces its 1/size of the chunk over every rank's slot, in
    // rank order: each element is reduced by one rank only, so every rank
    // copies out the same bits.
    const size_t lo = n * static_cast<size_t>(rank_) / static_cast<size_t>(size_);
    const size_t hi = n * static_cast<size_t>(rank_ + 1) / static_cast<size_t>(size_);
    if (hi > lo) {
      const size_t at = lo * item;
      reduce(result + at, slot(0) + at, slot(1) + at, hi - lo);
      for (int r = 2; r < size_; ++r) reduce(result + at, result + at, slot(r) + at, hi - lo);
    }
    arrive_and_wait("all_reduce", deadline);
    std::memcpy(mine, result, n * item);
  }
}

void ShmGroup::broadcast(char* data, size_t bytes, int root, uint64_t sequence, uint64_t signature,
                         Clock::time_point deadline) {
  throw_if_failed("broadcast");
  publish(sequence, signature);
  for (size_t first = 0; first < bytes; first += slot_bytes_) {
    const size_t n = std::min(slot_bytes_, bytes - first);
    if (rank_ == root) std::memcpy(slot(root), data + first, n);
    if (first == 0) enter("broadcast", sequence, signature, deadline);
    else arrive_and_wait("broadcast", deadline);
    if (rank_ != root) std::memcpy(data + first, slot(root), n);
    arrive_and_wait("broadcast", deadline);  // read before the root writes its slot again
  }
}

void ShmGroup::barrier(uint64_t sequence, uint64_t signature, Clock::time_point deadline) {
  throw_if_failed("barrier");
  publish(sequence, signature);
  enter("barrier", sequence, signature, deadline);
  arrive_and_wait("barrier", deadline);  // every rank checked before anyone publishes again
}

}  // namespace loom::gloo_plugin
