// The plugin entry: registers the "cpu" device type and every kernel with
// the dtypes it takes, one family per call; the families and their names
// are the CUDA plugin's (plugins/cuda/register.cpp). Kernels take any
// strides; layer_norm, the cross_entropy pair and _rnn are CONTIGUOUS_ONLY.
#include "fused_region.hpp"
#include "kernels.hpp"

#include <loom/plugin.hpp>

namespace loom::cpu {
namespace {

void init(plugin::Registrar& r) {
  r.device_type(device_type_desc());
  register_fill_copy_kernels(r);
  register_random_kernels(r);
  register_matmul_kernels(r);
  register_softmax_kernels(r);
  register_layer_norm_kernels(r);
  register_cross_entropy_kernels(r);
  register_elementwise_kernels(r);
  register_reduce_kernels(r);
  register_index_shape_kernels(r);
  register_pool_kernels(r);
  register_attention_kernels(r);
  register_conv_kernels(r);
  register_batch_norm_kernels(r);
  register_rnn_kernels(r);
  register_optim_kernels(r);
  remember_kernels_for_regions(r);  // last: it reads what the others registered
}

}  // namespace
}  // namespace loom::cpu

LOOM_PLUGIN("cpu", "0.1.0", loom::cpu::init)
