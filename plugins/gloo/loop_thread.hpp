// gloo's TCP event-loop thread: running code on it, and the scheduling
// policy that keeps it from stalling collectives.
//
// Why a policy at all: gloo's tcp::Pair::handleEvents only try-locks the
// pair; when the thread running a collective holds that lock (it does while
// it posts a send or a receive), the loop thread returns at once and, the
// socket being level-triggered readable, epoll_wait hands it the same event
// again — it spins. Incoming data wakes the loop thread, and the kernel lets
// a thread that has slept preempt the running one: if that is the lock
// holder on the same core, the loop thread spins out a whole time slice
// (~4 ms at HZ=250) before the holder runs again. Measured: a 4 KiB
// all_reduce with each rank on one core took 3.9 ms every call (PyTorch's
// gloo, the same Debian libgloo, hits it too, less often). SCHED_BATCH
// takes wakeup preemption away from the loop thread only — it still runs
// as soon as the collective's thread blocks — and the same call takes
// 0.17 ms. Upstream: pytorch/gloo#246.
#pragma once

#include <functional>
#include <string>

namespace gloo::transport {
class Device;
}

namespace loom::gloo_plugin {

// Runs fn once on the event-loop thread of a gloo tcp device and returns
// after it has run (fn's exceptions are rethrown here). Throws when the
// device is not a tcp device or its loop does not run fn within 10 s.
void run_on_loop_thread(gloo::transport::Device& device, const std::function<void()>& fn);

// Puts the device's loop thread under SCHED_BATCH (see above). Best effort:
// returns an empty string on success, otherwise why it could not (the
// plugin still works, with the stalls described above).
std::string batch_schedule_loop_thread(gloo::transport::Device& device);

}  // namespace loom::gloo_plugin
