// sim_runtime.hpp — sim's streams, events and its one option, shared by the
// device table (sim_device.cpp) and the kernels (sim_kernels.cpp).
//
// sim runs everything synchronously on the calling thread, so a stream is
// only an id to check: work is "done" the moment it returns. What sim does
// check is that loom hands its kernels and copies the right stream:
//  - always: a stream is NULL (the default stream) or a live stream of the
//    device the work is for, and
//  - with the option sim_strict_streams=1: it is the stream loom last made
//    current on this thread through set_current_stream.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>

namespace sim {

// Throws loom::plugin::Failure(INVALID_ARGUMENT) unless `stream` may carry
// work for device `index` now (the two rules above).
void check_work_stream(int32_t index, void* stream);

// Fills the stream, event, set_current_stream and set_option slots.
void add_runtime_slots(LoomDeviceTypeDesc& d);

}  // namespace sim
