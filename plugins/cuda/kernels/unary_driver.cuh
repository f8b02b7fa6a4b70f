// The one driver behind every unary CUDA kernel (unary.cu, unary_float.cu),
// as the CPU plugin's unary_loops.hpp. An op is a *family*:
//   static constexpr const char* name;    // the op: its dtype rule and in-place
//                                         // form are the table's (op_rules.hpp)
//   static constexpr bool copies_integers; // integers and bool pass unchanged
//   template <class T> static Fn make(const LoomKernelCall&);
// `make` reads and checks the op's values on the host and returns the
// functor of unary_ops.cuh for storage type T. unary_kernel<Family> is then
// the whole kernel; register_unary registers it (and its in-place form).
//
// copies_integers families (floor, round, nan_to_num ...) are instantiated
// for the floating dtypes only; integers go through one copy per element
// size, which an in-place call skips altogether.
#pragma once

#include <loom/plugin/op_rules.hpp>

#include "elementwise_args.hpp"
#include "loops.cuh"
#include "vendor/gpu_target.hpp"

#include <string>

namespace loom::LOOM_GPU_NAMESPACE::ew {

template <class U>
struct CopyElement {
  __host__ __device__ U operator()(U a) const { return a; }
};

// out = in for a dtype the op leaves unchanged, moved as words of its size.
inline void copy_unchanged(const LoomTensorDesc& out, const LoomTensorDesc& in, cudaStream_t s, const char* op) {
  const bool same_memory = plugin::data_ptr<char>(out) == plugin::data_ptr<char>(in) &&
                           [&] {
                             for (int32_t d = 0; d < out.ndim; ++d)
                               if (out.shape[d] > 1 && out.strides[d] != in.strides[d]) return false;
                             return true;
                           }();
  if (same_memory) return;  // in place: nothing to do
  switch (plugin::dtype_itemsize(out.dtype)) {
    case 1: return elementwise<uint8_t, uint8_t>(out, {&in}, CopyElement<uint8_t>{}, s, op);
    case 2: return elementwise<uint16_t, uint16_t>(out, {&in}, CopyElement<uint16_t>{}, s, op);
    case 4: return elementwise<uint32_t, uint32_t>(out, {&in}, CopyElement<uint32_t>{}, s, op);
    default: return elementwise<uint64_t, uint64_t>(out, {&in}, CopyElement<uint64_t>{}, s, op);
  }
}

template <class Family>
void unary_kernel(const LoomKernelCall& c) {
  constexpr const char* name = Family::name;
  expect_arity(c, name, 1, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& in = c.inputs[0];
  if constexpr (plugin::op_returns_bool(name)) {  // the input keeps its own dtype
    static_assert(!Family::copies_integers, "a to-bool op never copies its input");
    expect_like(in, out, name, /*same_dtype=*/false);
    expect_bool_output(out, name);
    visit<DTypes::All>(in.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      auto f = Family::template make<T>(c);
      elementwise<bool, T>(out, {&in}, f, enter(c), name);
    });
  } else {
    expect_like(in, out, name);
    visit<plugin::op_class(name)>(out.dtype, name, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Family::copies_integers && !is_floating_v<T>) {
        copy_unchanged(out, in, enter(c), name);
      } else {
        auto f = Family::template make<T>(c);
        elementwise<T, T>(out, {&in}, f, enter(c), name);
      }
    });
  }
}

// Registers the family's kernel as `name` and, when the table gives the op
// one, as `name_` (outputs[0] aliasing inputs[0], which the launcher
// allows), with the table's mask.
template <class Family>
void register_unary(plugin::Registrar& r, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  constexpr uint64_t mask = plugin::op_mask(Family::name);
  constexpr LoomKernelFn fn = plugin::kernel<unary_kernel<Family>>;
  r.kernel(Family::name, LOOM_GPU_NAME, fn, mask, 0, nullptr, file, line);
  if constexpr (plugin::op_has_in_place(Family::name))
    r.kernel((std::string(Family::name) + "_").c_str(), LOOM_GPU_NAME, fn, mask, 0, nullptr, file, line);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::ew
