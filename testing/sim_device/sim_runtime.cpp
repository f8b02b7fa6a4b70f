// sim_runtime.cpp — streams, events, the current stream and options for the
// sim device (see sim_runtime.hpp for what is checked and why).
#include "sim_runtime.hpp"

#include "sim_queue.hpp"

#include <loom/plugin.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>

namespace sim {
namespace {

using loom::plugin::Failure;
using loom::plugin::guard;
using Clock = std::chrono::steady_clock;

struct Stream {
  int32_t device;
};

struct Event {
  int32_t device;
  bool recorded = false;
  Clock::time_point at;    // when it was last recorded
  void* stream = nullptr;  // where, and the queued work it follows (sim_queue.hpp)
  uint64_t ticket = 0;
};

// Every live stream and event, so that a stale or foreign handle is an error
// rather than a crash.
std::mutex live_mutex;
std::set<const void*> live_streams;
std::set<const void*> live_events;

std::atomic<bool> strict_streams{false};

// What loom last made current on this thread, per device index.
thread_local std::unordered_map<int32_t, void*> current_stream;

std::string describe(const void* stream) {
  if (!stream) return "the default stream";
  std::ostringstream os;
  os << "stream " << stream;
  return os.str();
}

void check_live_stream(int32_t index, void* stream) {
  if (!stream) return;
  std::lock_guard lock(live_mutex);
  if (!live_streams.count(stream))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: " + describe(stream) + " is not a live sim stream");
  if (static_cast<Stream*>(stream)->device != index)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  "sim: " + describe(stream) + " belongs to sim:" +
                      std::to_string(static_cast<Stream*>(stream)->device) + ", not sim:" +
                      std::to_string(index));
}

Event& live_event(int32_t index, void* event) {
  std::lock_guard lock(live_mutex);
  if (!event || !live_events.count(event))
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: not a live sim event");
  auto& e = *static_cast<Event*>(event);
  if (e.device != index)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: the event belongs to sim:" +
                                                    std::to_string(e.device) + ", not sim:" +
                                                    std::to_string(index));
  return e;
}

LoomError* stream_create(void*, int32_t index, void** out) {
  return guard([&] {
    auto* s = new Stream{index};
    std::lock_guard lock(live_mutex);
    live_streams.insert(s);
    *out = s;
  });
}

void stream_destroy(void*, int32_t index, void* stream) {
  {
    std::lock_guard lock(live_mutex);
    if (!live_streams.erase(stream)) return;  // not ours: leave it alone
  }
  retire_stream(index, stream);  // like CUDA: queued work still completes
  delete static_cast<Stream*>(stream);
}

LoomError* stream_synchronize(void*, int32_t index, void* stream) {
  return guard([&] {
    check_live_stream(index, stream);
    drain(index, stream);
  });
}

LoomError* stream_query(void*, int32_t index, void* stream, int32_t* out_done) {
  return guard([&] {
    check_live_stream(index, stream);
    *out_done = has_run(index, stream, last_ticket(index, stream)) ? 1 : 0;
  });
}

LoomError* event_create(void*, int32_t index, void** out) {
  return guard([&] {
    auto* e = new Event{index, false, Clock::time_point{}, nullptr, 0};
    std::lock_guard lock(live_mutex);
    live_events.insert(e);
    *out = e;
  });
}

void event_destroy(void*, int32_t, void* event) {
  {
    std::lock_guard lock(live_mutex);
    if (!live_events.erase(event)) return;
  }
  delete static_cast<Event*>(event);
}

LoomError* event_record(void*, int32_t index, void* event, void* stream) {
  return guard([&] {
    check_live_stream(index, stream);
    Event& e = live_event(index, event);
    e.at = Clock::now();
    e.recorded = true;
    e.stream = stream;
    e.ticket = last_ticket(index, stream);
  });
}

LoomError* event_synchronize(void*, int32_t index, void* event) {
  return guard([&] {
    const Event& e = live_event(index, event);
    if (e.recorded) drain(index, e.stream, e.ticket);
  });
}

LoomError* event_query(void*, int32_t index, void* event, int32_t* out_done) {
  return guard([&] {
    const Event& e = live_event(index, event);
    *out_done = !e.recorded || has_run(index, e.stream, e.ticket) ? 1 : 0;
  });
}

// sim runs later work at once, so "wait for the event" means: finish what it
// marks now.
LoomError* stream_wait_event(void*, int32_t index, void* stream, void* event) {
  return guard([&] {
    check_live_stream(index, stream);
    const Event& e = live_event(index, event);
    if (e.recorded) drain(index, e.stream, e.ticket);
  });
}

LoomError* event_elapsed_ms(void*, int32_t index, void* start, void* end, float* out_ms) {
  return guard([&] {
    const Event& a = live_event(index, start);
    const Event& b = live_event(index, end);
    if (!a.recorded || !b.recorded)
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT, "sim: elapsed time needs two recorded events");
    *out_ms = std::chrono::duration<float, std::milli>(b.at - a.at).count();
  });
}

LoomError* set_current_stream(void*, int32_t index, void* stream) {
  return guard([&] {
    check_live_stream(index, stream);
    current_stream[index] = stream;
  });
}

LoomError* set_option(void*, const char* key, const char* value) {
  return guard([&] {
    if (std::strcmp(key, "sim_strict_streams") != 0)
      throw Failure(LOOM_STATUS_NOT_FOUND,
                    std::string("sim: unknown option '") + key + "' (sim knows sim_strict_streams)");
    if (std::strcmp(value, "0") != 0 && std::strcmp(value, "1") != 0)
      throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                    std::string("sim: sim_strict_streams takes \"0\" or \"1\", not \"") + value + "\"");
    strict_streams = value[0] == '1';
  });
}

}  // namespace

void check_work_stream(int32_t index, void* stream) {
  check_live_stream(index, stream);
  drain(index, stream);  // stream order: queued copies finish before later work
  if (!strict_streams) return;
  auto it = current_stream.find(index);
  void* current = it == current_stream.end() ? nullptr : it->second;
  if (stream != current)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  "sim: strict streams: work for sim:" + std::to_string(index) + " came on " +
                      describe(stream) + " but this thread's current stream is " + describe(current));
}

void add_runtime_slots(LoomDeviceTypeDesc& d) {
  d.stream_create = &stream_create;
  d.stream_destroy = &stream_destroy;
  d.stream_synchronize = &stream_synchronize;
  d.event_create = &event_create;
  d.event_destroy = &event_destroy;
  d.event_record = &event_record;
  d.event_synchronize = &event_synchronize;
  d.event_elapsed_ms = &event_elapsed_ms;
  d.set_current_stream = &set_current_stream;
  d.set_option = &set_option;
  d.stream_wait_event = &stream_wait_event;
  d.stream_query = &stream_query;
  d.event_query = &event_query;
}

}  // namespace sim
