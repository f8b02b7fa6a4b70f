// stream.cpp — streams, the per-thread current stream, and events, on top of
// the plugin's optional stream/event slots (loom/stream.h).
#include "current_stream.h"
#include "device_registry.h"
#include "plugin_call.h"

#include <loom/error.h>
#include <loom/stream.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace loom {
namespace detail {

constinit thread_local const CurrentStreamTable* current_streams LOOM_FAST_TLS = nullptr;

struct StreamHandle {
  Device device;
  void* handle = nullptr;
  ~StreamHandle() {
    const auto& e = device_type(device.type);
    LOOM_DEVICE_SLOT_NOTHROW(e, stream_destroy, device.index, handle);
  }
};

struct EventState {
  std::optional<Device> device;  // set by the first record
  void* handle = nullptr;        // created by the first record
  bool recorded = false;
  ~EventState() {
    if (!handle) return;
    const auto& e = device_type(device->type);
    LOOM_DEVICE_SLOT_NOTHROW(e, event_destroy, device->index, handle);
  }
};

namespace {

// What set_current_stream changed on this thread: the handle table the hot
// path reads, and the Streams it points into (kept alive while current).
struct ThreadStreams {
  CurrentStreamTable table;
  std::vector<Stream> owners;  // at most one per device, non-default only
  ~ThreadStreams() { current_streams = nullptr; }
};

thread_local std::unique_ptr<ThreadStreams> thread_streams;

ThreadStreams& this_thread_streams() {
  if (!thread_streams) {
    thread_streams = std::make_unique<ThreadStreams>();
    current_streams = &thread_streams->table;
  }
  return *thread_streams;
}

const DeviceTypeEntry& stream_entry(Device d) {
  return device_type_offering(d, device_type(d.type).desc.stream_create != nullptr, "streams");
}

const DeviceTypeEntry& event_entry(Device d) {
  return device_type_offering(d, device_type(d.type).desc.event_create != nullptr, "events");
}

}  // namespace
}  // namespace detail

Stream::Stream(Device device) : device_(device) {
  const auto& e = detail::stream_entry(device);
  void* handle = nullptr;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, stream_create, device.index, &handle))
    detail::throw_abi_error(err, detail::cat("creating a stream on ", device.str()));
  LOOM_CHECK(handle, "creating a stream on ", device.str(), ": the plugin (", e.plugin,
             ") returned a null stream, which means the default stream");
  auto owned = std::make_shared<detail::StreamHandle>();
  owned->device = device;
  owned->handle = handle;
  handle_ = std::move(owned);
}

Stream Stream::default_stream(Device device) {
  (void)detail::device_type(device.type);  // a registered type
  return Stream(device, nullptr);
}

void* Stream::native_handle() const { return handle_ ? handle_->handle : nullptr; }

void Stream::synchronize() const {
  if (!handle_) {
    loom::synchronize(device_);
    return;
  }
  const auto& e = detail::device_type(device_.type);
  if (LoomError* err = LOOM_DEVICE_SLOT(e, stream_synchronize, device_.index, handle_->handle))
    detail::throw_abi_error(err, detail::cat("synchronizing a stream of ", device_.str()));
}

void Stream::wait_event(const Event& event) const {
  if (!event.is_recorded()) return;
  LOOM_CHECK(*event.device() == device_, "Stream.wait_event: the event was recorded on ", event.device()->str(),
             " and this stream is on ", device_.str(), "; both must be on one device");
  const auto& e = detail::device_type(device_.type);
  if (!e.desc.stream_wait_event) {  // correct, only slower: the host waits
    event.synchronize();
    return;
  }
  if (LoomError* err = LOOM_DEVICE_SLOT(e, stream_wait_event, device_.index, native_handle(),
                                                event.state_->handle))
    detail::throw_abi_error(err, detail::cat("making a stream of ", device_.str(), " wait for an event"));
}

void Stream::wait_stream(const Stream& other) const {
  LOOM_CHECK(other.device() == device_, "Stream.wait_stream: the streams are on ", other.device().str(), " and ",
             device_.str(), "; both must be on one device");
  if (other == *this) return;
  const auto& e = detail::device_type(device_.type);
  if (!e.desc.event_create) {  // no events, so no streams: the work is done already
    return;
  }
  Event marker;
  marker.record(other);
  wait_event(marker);
}

bool Stream::query() const {
  const auto& e = detail::device_type(device_.type);
  if (!e.desc.stream_create) return true;  // nothing is ever queued
  const auto& q = detail::device_type_offering(device_, e.desc.stream_query != nullptr, "stream queries");
  int32_t done = 0;
  if (LoomError* err = LOOM_DEVICE_SLOT(q, stream_query, device_.index, native_handle(), &done))
    detail::throw_abi_error(err, detail::cat("querying a stream of ", device_.str()));
  return done != 0;
}

Stream current_stream(Device device) {
  if (detail::current_stream_handle(device)) {
    for (const Stream& s : detail::thread_streams->owners)
      if (s.device() == device) return s;
  }
  return Stream::default_stream(device);
}

namespace detail {
namespace {
// Tells the plugin (when it has the slot), then points this thread's table at
// the stream. A plugin refusal throws before anything changed, unless
// `restoring`: a guard going out of scope must not throw, and the host's
// table goes back to the previous stream in any case.
void make_current(const Stream& stream, bool restoring) {
  const Device d = stream.device();
  void* handle = stream.native_handle();
  const auto& e = device_type(d.type);
  LOOM_CHECK(!handle || d.index < kMaxStreamDevices, "set_current_stream: device ", d.str(),
             " is past the ", kMaxStreamDevices,
             " devices per type that may have a non-default current stream");
  if (e.desc.set_current_stream) {
    LoomError* err = LOOM_DEVICE_SLOT(e, set_current_stream, d.index, handle);
    if (err && !restoring) throw_abi_error(err, cat("making a stream current on ", d.str()));
    if (err) err->destroy(err);
  }
  if (!handle && !thread_streams) return;  // already the default everywhere
  auto& ts = this_thread_streams();
  std::erase_if(ts.owners, [&](const Stream& s) { return s.device() == d; });
  if (handle) ts.owners.push_back(stream);
  if (d.index < kMaxStreamDevices) ts.table.handle[d.type][d.index] = handle;
}
}  // namespace
}  // namespace detail

void set_current_stream(const Stream& stream) { detail::make_current(stream, false); }

StreamGuard::StreamGuard(const Stream& stream) : previous_(current_stream(stream.device())) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() { detail::make_current(previous_, true); }

Event::Event() : state_(std::make_shared<detail::EventState>()) {}

void Event::record(const Stream& stream) {
  const Device d = stream.device();
  if (state_->device && *state_->device != d)
    throw Error(detail::cat("Event.record: the event belongs to ", state_->device->str(),
                            " (its first record) and cannot be recorded on a stream of ", d.str()));
  const auto& e = detail::event_entry(d);
  if (!state_->handle) {
    void* handle = nullptr;
    if (LoomError* err = LOOM_DEVICE_SLOT(e, event_create, d.index, &handle))
      detail::throw_abi_error(err, detail::cat("creating an event on ", d.str()));
    state_->device = d;
    state_->handle = handle;
  }
  if (LoomError* err = LOOM_DEVICE_SLOT(e, event_record, d.index, state_->handle,
                                           stream.native_handle()))
    detail::throw_abi_error(err, detail::cat("recording an event on ", d.str()));
  state_->recorded = true;
}

void Event::synchronize() const {
  if (!state_->recorded) return;
  const Device d = *state_->device;
  const auto& e = detail::device_type(d.type);
  if (LoomError* err = LOOM_DEVICE_SLOT(e, event_synchronize, d.index, state_->handle))
    detail::throw_abi_error(err, detail::cat("synchronizing an event on ", d.str()));
}

float Event::elapsed_ms(const Event& end) const {
  LOOM_CHECK(state_->recorded, "Event.elapsed_ms: the start event was never recorded");
  LOOM_CHECK(end.state_->recorded, "Event.elapsed_ms: the end event was never recorded");
  const Device d = *state_->device;
  LOOM_CHECK(*end.state_->device == d, "Event.elapsed_ms: the events were recorded on ",
             d.str(), " and ", end.state_->device->str(), "; both must be on one device");
  const auto& e = detail::device_type(d.type);
  float ms = 0;
  if (LoomError* err =
          LOOM_DEVICE_SLOT(e, event_elapsed_ms, d.index, state_->handle, end.state_->handle, &ms))
    detail::throw_abi_error(err, detail::cat("timing two events on ", d.str()));
  return ms;
}

bool Event::query() const {
  if (!state_->recorded) return true;
  const Device d = *state_->device;
  const auto& e = detail::device_type_offering(d, detail::device_type(d.type).desc.event_query != nullptr,
                                               "event queries");
  int32_t done = 0;
  if (LoomError* err = LOOM_DEVICE_SLOT(e, event_query, d.index, state_->handle, &done))
    detail::throw_abi_error(err, detail::cat("querying an event on ", d.str()));
  return done != 0;
}

void Event::wait(const Stream& stream) const { stream.wait_event(*this); }

bool Event::is_recorded() const { return state_->recorded; }
std::optional<Device> Event::device() const { return state_->device; }

}  // namespace loom
