// The plugin entry: registers the "cpu" device type and every kernel with
// the dtypes it takes. Kernels take any strides; only layer_norm and the
// cross_entropy pair are CONTIGUOUS_ONLY.
#include "common.hpp"
#include "kernels.hpp"

#include <loom/plugin/op_rules.hpp>

#include <loom/plugin.hpp>

namespace loom::cpu {
namespace {

constexpr uint64_t kMatmulMask = kNoBoolMask;

void init(plugin::Registrar& r) {
  r.device_type(device_type_desc());
  using plugin::kernel;
  r.kernel("fill_", "cpu", kernel<fill_>, kAllMask);
  r.kernel("copy_", "cpu", kernel<copy_>, kAllMask);
  // The catalog's masks (loom/plugin/op_rules.hpp); in-place forms are the
  // same kernels, with outputs[0] aliasing inputs[0].
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "add", "cpu", kernel<add>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "mul", "cpu", kernel<mul>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "sub", "cpu", kernel<sub>);
  // Integers too: div with rounding_mode "trunc"/"floor" stays integral.
  r.kernel("div", "cpu", kernel<div>, kNoBoolMask);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "neg", "cpu", kernel<neg>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "relu", "cpu", kernel<relu>);
  LOOM_PLUGIN_REGISTER_TABLE_OP(r, "exp", "cpu", kernel<exp>);
  r.kernel("sum", "cpu", kernel<sum>, kAllMask);
  r.kernel("matmul", "cpu", kernel<matmul>, kMatmulMask);
  // The core plans mm, bmm and dot exactly as matmul, and outer as a
  // broadcast multiply: the same kernels serve them.
  for (const char* op : {"mm", "bmm", "dot"}) r.kernel(op, "cpu", kernel<matmul>, kMatmulMask);
  r.kernel("outer", "cpu", kernel<mul>, kAllMask);
  r.kernel("uniform_", "cpu", kernel<uniform_>, kFloatingMask);
  r.kernel("normal_", "cpu", kernel<normal_>, kFloatingMask);
  register_unary_kernels(r);
  register_binary_kernels(r);
  register_reduce_kernels(r);
  register_nn_misc_kernels(r);
  register_indexing_kernels(r);
  register_shape_kernels(r);
  register_conv_kernels(r);
  register_nn_kernels(r);
  register_optim_kernels(r);
}

}  // namespace
}  // namespace loom::cpu

LOOM_PLUGIN("cpu", "0.1.0", loom::cpu::init)
