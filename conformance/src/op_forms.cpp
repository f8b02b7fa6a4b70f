// op_forms.cpp — in-place partners, out= and gradient eligibility of ops.
#include "op_forms.h"

#include <loom/schema.h>

namespace loom::conformance {

const OpDef* inplace_partner(const OpDef& op) {
  const Schema& s = op.schema();
  if (s.is_inplace() || s.returns.empty()) return nullptr;
  const std::string name = s.name + "_" + (s.overload.empty() ? "" : "." + s.overload);
  const OpDef* partner = Dispatcher::instance().find(name);
  if (!partner) return nullptr;
  const auto& a = s.args;
  const auto& b = partner->schema().args;
  if (a.size() != b.size() || b.empty() || !b[0].mutated) return nullptr;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].type != b[i].type || a[i].optional != b[i].optional) return nullptr;
  return partner;
}

bool has_out_form(const OpDef& op) {
  const Schema& s = op.schema();
  if (s.is_inplace() || s.returns.empty()) return false;
  for (const auto& r : s.returns)
    if (r.type != ArgType::Tensor) return false;
  return true;
}

bool is_differentiable(const OpDef& op) { return op.formula() != nullptr; }

}  // namespace loom::conformance
