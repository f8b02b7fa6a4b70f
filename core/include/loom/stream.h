// loom/stream.h — device streams and events, for the plugins that have them.
//
// A stream is an ordered queue of work on one device; every device has a
// default stream (a null handle), and a plugin that fills the stream slots of
// LoomDeviceTypeDesc can make more. Each thread has a *current stream* per
// device: kernels dispatched to that device and copies to or from it run on
// it. Change it for a scope with StreamGuard (torch.cuda.stream):
//
//   loom::Stream side(loom::Device("cuda"));
//   {
//     loom::StreamGuard on(side);
//     y = x.matmul(w);             // queued on `side`
//   }                               // back to the previous stream
//   loom::Event start, stop;       // timing, like torch.cuda.Event
//   start.record(side); ...; stop.record(side);
//   stop.synchronize();
//   float ms = start.elapsed_ms(stop);
//
// Copies between host memory and a device on a non-default stream are
// followed by a synchronize of that stream (PyTorch's non_blocking=False),
// so host data read after a copy is always complete; only
// Tensor::to(device, /*non_blocking=*/true) between pinned host memory and
// its device leaves the copy queued. To order work across streams without
// a host wait: consumer.wait_stream(producer), or record an Event on one
// stream and consumer.wait_event(it).
#pragma once

#include <loom/device.h>

#include <memory>
#include <optional>

namespace loom {

namespace detail {
struct StreamHandle;  // owns one plugin stream; destroys it with the last ref
struct EventState;
}  // namespace detail

class Event;

class Stream {
 public:
  // A new stream on `device` (the plugin's stream_create). Throws naming the
  // device when its plugin offers no streams.
  explicit Stream(Device device);
  // The default stream of `device`: exists on every device, streams or not.
  static Stream default_stream(Device device);

  Device device() const { return device_; }
  // The plugin's handle; nullptr for the default stream.
  void* native_handle() const;
  bool is_default() const { return native_handle() == nullptr; }
  // Waits for the work queued on this stream (the whole device for the
  // default stream).
  void synchronize() const;
  // Work queued on this stream from now on starts only after the work before
  // `event`'s latest record (the host does not wait; an event never recorded
  // is already done). The event must be of this stream's device. A plugin
  // without the stream_wait_event slot gets a host wait instead.
  void wait_event(const Event& event) const;
  // Work queued on this stream from now on starts only after all work queued
  // on `other` (same device) so far: torch.cuda.Stream.wait_stream.
  void wait_stream(const Stream& other) const;
  // True when all work queued on this stream is done; never blocks. Always
  // true on a device without streams (its work is done when a call returns).
  bool query() const;

  bool operator==(const Stream& o) const {
    return device_ == o.device_ && native_handle() == o.native_handle();
  }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  Stream(Device device, std::shared_ptr<const detail::StreamHandle> handle)
      : device_(device), handle_(std::move(handle)) {}
  Device device_;
  std::shared_ptr<const detail::StreamHandle> handle_;  // null: default stream
};

// This thread's current stream on `device` (its default stream unless a
// StreamGuard or set_current_stream chose another).
Stream current_stream(Device device);
// Makes `stream` this thread's current stream on its device, until changed
// again (torch.cuda.set_stream). The stream is kept alive while current.
// Tells the plugin through its set_current_stream slot when it has one.
void set_current_stream(const Stream& stream);

// Makes a stream current for a scope and restores the previous one of that
// device on exit. Guards nest.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
};

// A marker in a stream, for waiting on and timing work. An Event is bound to
// a device by its first record (like a CUDA event); copies of an Event share
// the same marker.
class Event {
 public:
  Event();
  // Marks the current end of `stream`'s queue (re-recording moves the mark).
  // Throws when the stream's device differs from an earlier record's, or the
  // device's plugin offers no events.
  void record(const Stream& stream);
  // Same, on the current stream of `device`.
  void record(Device device) { record(current_stream(device)); }
  // Waits until the work before the mark is done; returns at once for an
  // event never recorded.
  void synchronize() const;
  // Milliseconds from this event's mark to `end`'s; both recorded on the same
  // device and complete (synchronize `end` first).
  float elapsed_ms(const Event& end) const;

  // True when the work before the latest record is done (or the event was
  // never recorded); never blocks.
  bool query() const;
  // Makes work queued on `stream` from now on wait for this event's latest
  // record (stream.wait_event(*this)).
  void wait(const Stream& stream) const;

  bool is_recorded() const;
  // The device of the first record; empty before it.
  std::optional<Device> device() const;

 private:
  friend class Stream;  // wait_event hands the plugin handle over
  std::shared_ptr<detail::EventState> state_;
};

}  // namespace loom
