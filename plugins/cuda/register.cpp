// The plugin entry: the "cuda" device type and its kernels. Registration
// touches no device, so the plugin loads (with zero devices and the reason
// in loom-info) on machines without a GPU or driver; ops it has no kernel
// for run on the CPU through the core's fallback, counted per op.
#include "device.hpp"

namespace loom::cuda {
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
#if LOOM_CUDA_HAVE_CUDNN
  register_conv_kernels(r);
  register_batch_norm_kernels(r);
#endif
}

}  // namespace
}  // namespace loom::cuda

LOOM_PLUGIN("cuda", "0.1.0", loom::cuda::init)
