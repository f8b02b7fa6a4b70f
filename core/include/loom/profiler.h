// loom/profiler.h — where a program's time goes, op by op (torch.profiler's
// role, for loom's own ops).
//
//   loom::profiler::Profile prof;          // records this thread's op calls
//   train_step();
//   prof.stop();                           // waits for the devices
//   std::cout << prof.table(20);           // ops by total time, as
//                                          // key_averages().table() prints
//
// Every call through the dispatcher on the profiling thread is an event:
// the op, its device, its host time (from the call's entry to its return:
// autograd recording, argument checks, allocation and the kernel's launch or
// run), and, on a device whose plugin has events, its device time (events
// recorded on the current stream before and after the call, read when the
// profile stops). Calls made inside another op — a composite's inner ops,
// the CPU fallback's copies — are events one level deeper, and the outer
// op's self time excludes them. Backward runs on the calling thread, so its
// ops are recorded too.
//
// Not recording costs one thread-local load per op call. Recording adds a
// clock read, a vector append and, on devices with events, two event
// records per call: profile a few steps, not a whole run. Profiles nest like
// DispatchTrace (an inner one sees only its own calls) and belong to the
// thread that made them.
#pragma once

#include <loom/device.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom {
class Event;
struct OpCall;
}  // namespace loom

namespace loom::profiler {

class Profile;

struct OpEvent {
  std::string name;        // the op's full name: "add", "max.dim"
  Device device;           // the device the call ran for
  int depth = 0;           // 0: called by the program (or autograd); n: inside n other ops
  int64_t start_ns = 0;    // host clock, from the profile's start
  int64_t end_ns = 0;
  double device_ms = -1;   // device time of the call; -1 where the device has no events
};

// One op name's events together.
struct OpStats {
  std::string name;
  int64_t calls = 0;
  double host_total_ms = 0;  // inner ops included
  double host_self_ms = 0;   // inner ops excluded
  double device_ms = -1;     // total device time; -1 where no call had one
};

// A labelled range of the program (torch.profiler.record_function): an
// event like an op call's, with the ops called inside it one level deeper,
// recorded while a profile records on this thread; nothing otherwise. Ranges
// nest like scopes, and end before the profile they record into is
// destroyed.
class RecordFunction {
 public:
  explicit RecordFunction(const std::string& name);
  ~RecordFunction();
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  Profile* profile_;
  size_t index_ = 0;
};

class Profile {
 public:
  Profile();
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  // Ends recording (idempotent; the destructor calls it), waiting for the
  // devices' queued work to read the device times.
  void stop();
  bool recording() const { return recording_; }

  // Every call, in the order the calls began (stop() first).
  const std::vector<OpEvent>& events() const { return events_; }
  // What key_averages() sorts by, descending. Default: the total device
  // time where any op has one, else the total host time.
  enum class SortBy { Default, HostTotal, HostSelf, Device, Calls };
  // By op name.
  std::vector<OpStats> key_averages(SortBy sort = SortBy::Default) const;
  // key_averages() as a text table with a total line; row_limit 0: every op.
  std::string table(size_t row_limit = 0, SortBy sort = SortBy::Default) const;

 private:
  friend struct ProfilerAccess;
  friend class RecordFunction;
  // Begins an event (and its device mark where the device has events);
  // returns its index for end_event.
  size_t begin_event(std::string name, Device device);
  void end_event(size_t index);
  struct Marks;
  std::vector<OpEvent> events_;
  std::vector<std::unique_ptr<Marks>> marks_;  // device events per call, where the device has them
  std::vector<int> no_events_;                 // device type slots whose plugins have no events
  std::chrono::steady_clock::time_point start_;
  Profile* previous_ = nullptr;
  const OpCall* open_call_ = nullptr;  // the innermost call being recorded
  int depth_ = 0;
  bool recording_ = true;
};

}  // namespace loom::profiler
