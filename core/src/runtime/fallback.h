// fallback.h (core-internal) — running an op on a device that has no kernel
// for it (fallback.cpp).
#pragma once

#include <loom/op_call.h>

namespace loom::detail {

// Applies the fallback policy (LOOM_FALLBACK: error throws naming the op,
// device and dtype; warn prints once per op and device), counts the
// fallback, then runs `boxed` (the device's boxed fallback) when given, else
// the CPU fallback.
void run_fallback(OpCall& call, const KernelEntry* boxed);

}  // namespace loom::detail
