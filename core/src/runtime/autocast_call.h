// autocast_call.h (core-internal) — the dispatcher's autocast step.
#pragma once

#include <loom/op_call.h>

#include <vector>

namespace loom::detail {
// Whether any device type has autocast on in this thread (and it is not
// suspended): dispatch's one test when autocast is off.
bool autocast_active();
// Casts call's floating tensor arguments by its op's policy when autocast is
// on for call.device's type; the casts live in `casts` (reserved here, so it
// never reallocates) and call.args point at them. Throws for ops autocast refuses.
void autocast_call(OpCall& call, std::vector<Tensor>& casts);
}  // namespace loom::detail
