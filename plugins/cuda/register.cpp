// The plugin entry: the "cuda" device type (or "hip", when plugins/hip builds
// these sources: LOOM_GPU_NAME) and its kernels. Registration
// touches no device, so the plugin loads (with zero devices and the reason
// in loom-info) on machines without a GPU or driver; ops it has no kernel
// for run on the CPU through the core's fallback, counted per op. The
// families and their names are the CPU plugin's (plugins/cpu/register.cpp),
// plus attention, which the CPU runs as composites.
#include "device.hpp"
#include "vendor/gpu_target.hpp"

namespace loom::LOOM_GPU_NAMESPACE {
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
  register_conv_kernels(r);  // cuDNN's, or the plugin's own (kernels/conv_direct.cu)
#if LOOM_GPU_HAVE_DNN
  register_batch_norm_kernels(r);  // otherwise batch_norm runs as its composite
  register_rnn_kernels(r);         // otherwise _rnn and _rnn_backward run as their composites
#endif
  register_optim_kernels(r);
}

}  // namespace
}  // namespace loom::LOOM_GPU_NAMESPACE

LOOM_PLUGIN(LOOM_GPU_NAME, "0.1.0", loom::LOOM_GPU_NAMESPACE::init)
