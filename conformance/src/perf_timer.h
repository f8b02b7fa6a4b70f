// perf_timer.h — --perf: microseconds per call of a case.
#pragma once

#include <loom/device.h>

#include <functional>

namespace loom::conformance {

// Runs `call` twice to warm up, then repeatedly until `min_seconds` have
// passed (at least 3 times), synchronizing `device` before reading the
// clock. Returns the mean microseconds per call.
double time_call_us(const std::function<void()>& call, Device device, double min_seconds);

}  // namespace loom::conformance
