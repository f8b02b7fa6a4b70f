// core_op.h (core-internal) — defining an op of the core catalog.
//
//   LOOM_CORE_OP(add_op, "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
//                prepare_add, nullptr)
// defines `const OpDef& add_op()`, registered when the core library loads, so
// the op is in the catalog before any plugin registers kernels for it. The
// accessor costs one guard check per call, no lookup.
#pragma once

#include <loom/op_registry.h>
#include <loom/op_call.h>

#include <string_view>

#define LOOM_CORE_OP(ident, schema, prepare, composite)                                  \
  const ::loom::OpDef& ident() {                                                        \
    static const ::loom::OpDef& op = ::loom::Dispatcher::instance().def(                 \
        schema, "loom core (" __FILE__ ")", prepare, composite);                          \
    return op;                                                                          \
  }                                                                                     \
  [[maybe_unused]] static const ::loom::OpDef& ident##_registered_at_load = ident();

namespace loom::detail {
// Runs `op` on the given tensors and values; returns output 0.
template <size_t NT, size_t NV>
Tensor run_op(const OpDef& op, const Tensor* const (&tensors)[NT], const LoomValue (&values)[NV]) {
  OpCall call(op);
  for (const Tensor* t : tensors) call.args.push_back(t);
  for (const LoomValue& v : values) call.values.push_back(v);
  dispatch(call);
  return std::move(call.outputs[0].result);
}
template <size_t NT>
Tensor run_op(const OpDef& op, const Tensor* const (&tensors)[NT]) {
  OpCall call(op);
  for (const Tensor* t : tensors) call.args.push_back(t);
  dispatch(call);
  return std::move(call.outputs[0].result);
}

// The same with an out= tensor for output 0; returns it.
template <size_t NT, size_t NV>
Tensor& run_op_out(Tensor& out, const OpDef& op, const Tensor* const (&tensors)[NT],
                   const LoomValue (&values)[NV]) {
  OpCall call(op);
  for (const Tensor* t : tensors) call.args.push_back(t);
  for (const LoomValue& v : values) call.values.push_back(v);
  call.out_args.push_back(&out);
  dispatch(call);
  return out;
}
template <size_t NT>
Tensor& run_op_out(Tensor& out, const OpDef& op, const Tensor* const (&tensors)[NT]) {
  OpCall call(op);
  for (const Tensor* t : tensors) call.args.push_back(t);
  call.out_args.push_back(&out);
  dispatch(call);
  return out;
}

inline LoomValue int_list_value(const IntArrayRef& v) {  // by reference: v may hold its one value inside
  LoomValue x{};
  x.kind = LOOM_VALUE_INT_LIST;
  x.u.ints.data = v.data();
  x.u.ints.size = static_cast<int64_t>(v.size());
  return x;
}
inline Scalar scalar_from_value(const LoomValue& v) {
  if (v.kind == LOOM_VALUE_FLOAT) return Scalar(v.u.f);
  if (v.kind == LOOM_VALUE_BOOL) return Scalar(v.u.i != 0);
  return Scalar(v.u.i);
}
inline LoomValue none_value() { return LoomValue{}; }
inline LoomValue bool_value(bool b) {
  LoomValue x{};
  x.kind = LOOM_VALUE_BOOL;
  x.u.i = b;
  return x;
}
inline LoomValue dtype_value(std::optional<DType> t) {
  LoomValue x{};
  if (t) {
    x.kind = LOOM_VALUE_DTYPE;
    x.u.i = static_cast<int64_t>(*t);
  }
  return x;
}
inline LoomValue float_value(double f) {
  LoomValue x{};
  x.kind = LOOM_VALUE_FLOAT;
  x.u.f = f;
  return x;
}
inline LoomValue int_value(int64_t i) {
  LoomValue x{};
  x.kind = LOOM_VALUE_INT;
  x.u.i = i;
  return x;
}
// A STRING value borrowing `s`'s characters (they must outlive the call).
inline LoomValue string_value(std::string_view s) {
  LoomValue x{};
  x.kind = LOOM_VALUE_STRING;
  x.u.str.data = s.data();
  x.u.str.size = static_cast<int64_t>(s.size());
  return x;
}
inline LoomValue device_value(Device d) {
  LoomValue x{};
  x.kind = LOOM_VALUE_DEVICE;
  x.u.device = d.abi();
  return x;
}
// A STRING value's characters.
inline std::string_view str_of(const LoomValue& v) { return {v.u.str.data, static_cast<size_t>(v.u.str.size)}; }
}  // namespace loom::detail
