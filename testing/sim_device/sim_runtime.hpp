// sim_runtime.hpp — sim's streams, events and its one option, shared by the
// device table (sim_device.cpp) and the kernels (sim_kernels.cpp).
//
// sim runs kernels and ordinary copies synchronously on the calling thread;
// only copies of pinned host memory stay queued on their stream
// (sim_queue.hpp), and any work on a stream first runs what that stream
// holds. What sim checks is that loom hands its kernels and copies the right
// stream:
//  - always: a stream is NULL (the default stream) or a live stream of the
//    device the work is for, and
//  - with the option sim_strict_streams=1: it is the stream loom last made
//    current on this thread through set_current_stream.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>

namespace sim {

// Throws loom::plugin::Failure(INVALID_ARGUMENT) unless `stream` may carry
// work for device `index` now (the two rules above); then runs the copies
// still queued on it, so that the caller's work comes after them.
void check_work_stream(int32_t index, void* stream);

// Fills the stream, event, set_current_stream, set_option, stream_wait_event
// and query slots.
void add_runtime_slots(LoomDeviceTypeDesc& d);

}  // namespace sim
