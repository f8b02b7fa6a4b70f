// The elementwise family (docs/kernel_conventions.md, "Elementwise unary
// ops" and "Elementwise binary and ternary ops"): each file registers its
// own ops; the CPU plugin groups them the same way.
#include "../device.hpp"
#include "elementwise_args.hpp"
#include "vendor/gpu_target.hpp"

namespace loom::LOOM_GPU_NAMESPACE {

void register_elementwise_kernels(plugin::Registrar& r) {
  ew::register_unary_kernels(r);        // unary.cu: neg, relu, abs ... isfinite, clamp, nan_to_num
  ew::register_unary_float_kernels(r);  // unary_float.cu: exp ... erf, gelu, silu ...
  ew::register_binary_kernels(r);       // binary.cu: add, sub, mul, div, the binary table rows, lerp
  ew::register_compare_kernels(r);      // compare.cu: comparisons, logical and bit ops, where
}

}  // namespace loom::LOOM_GPU_NAMESPACE
