// op_forms.h — which forms of an op a case can exercise.
#pragma once

#include <loom/op_registry.h>

namespace loom::conformance {

// The in-place partner of `op` ("add" -> "add_", "max.dim" -> "max_.dim")
// when the catalog has one taking the same arguments, else nullptr.
const OpDef* inplace_partner(const OpDef& op);
// Whether the op returns only tensors and mutates nothing, so its results
// can be written into out= tensors.
bool has_out_form(const OpDef& op);
// Whether the op has a derivative formula (for --grad).
bool is_differentiable(const OpDef& op);

}  // namespace loom::conformance
