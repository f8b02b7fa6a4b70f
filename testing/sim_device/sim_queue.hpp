// sim_queue.hpp — what makes sim's streams real for pinned memory.
//
// sim runs kernels and ordinary copies at once on the calling thread. Copies
// between sim and pinned host memory (host_allocate, ABI 1.3) instead stay
// queued on their stream, as the ABI's copy contract allows, until something
// waits for them: a stream or device synchronize, an event synchronize or
// wait, or the next work on the same stream (stream order). So tests can see
// that loom waits where it must, and does not where the user asked it not to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace sim {

// Queues `work` on stream `stream` (nullptr: the default stream) of sim
// device `index`; returns its ticket (1, 2, ... per stream).
uint64_t enqueue(int32_t index, void* stream, std::function<void()> work);
// Runs the work queued on that stream with tickets up to `upto`, in order.
void drain(int32_t index, void* stream, uint64_t upto = UINT64_MAX);
// Runs everything queued on any stream of device `index`, or of every device.
void drain_device(int32_t index);
void drain_all();
// The ticket of the latest work queued on that stream (0 when none ever was).
uint64_t last_ticket(int32_t index, void* stream);
// Whether the work with `ticket` on that stream has run.
bool has_run(int32_t index, void* stream, uint64_t ticket);
// Forgets a destroyed stream, running what it still holds first.
void retire_stream(int32_t index, void* stream);

// Pinned host blocks: plain host memory that sim remembers.
void* pinned_allocate(size_t nbytes);
void pinned_free(void* ptr);  // runs all queued work first: a queued copy may use the block
bool is_pinned(const void* p);

}  // namespace sim
