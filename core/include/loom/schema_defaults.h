// loom/schema_defaults.h — an argument's schema default as the LoomValue a
// boxed call passes (for callers that build OpCalls themselves: the Python
// binding, the op samples, loom-conformance).
#pragma once

#include <loom/schema.h>

namespace loom {

// The default of `a` as a LoomValue borrowing from `a` (so valid while the
// schema lives, i.e. for the process): strings point inside the quotes of
// default_text, int[] / float[] defaults at default_ints / default_floats.
// LOOM_VALUE_NONE for "None". `a` must have a default.
LoomValue default_value_of(const Argument& a);

}  // namespace loom
