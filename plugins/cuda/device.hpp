// The "cuda" device type's table (device.cpp) and the kernel registrations
// (one function per kernel family, in kernels/).
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>

namespace loom::LOOM_GPU_NAMESPACE {

const LoomDeviceTypeDesc& device_type_desc();

void register_fill_copy_kernels(plugin::Registrar& r);
void register_random_kernels(plugin::Registrar& r);
void register_matmul_kernels(plugin::Registrar& r);
void register_softmax_kernels(plugin::Registrar& r);
void register_layer_norm_kernels(plugin::Registrar& r);
void register_cross_entropy_kernels(plugin::Registrar& r);  // kernels/cross_entropy.cu
void register_elementwise_kernels(plugin::Registrar& r);  // kernels/elementwise.cpp: unary, unary_float, binary, compare
void register_reduce_kernels(plugin::Registrar& r);  // reductions and scans (kernels/reduce*.cu, scan.cu)
void register_index_shape_kernels(plugin::Registrar& r);  // indexing, shape, pad, embedding (kernels/indexing*.cu ...)
void register_pool_kernels(plugin::Registrar& r);    // kernels/pool.cu
void register_conv_kernels(plugin::Registrar& r);    // kernels/conv_cudnn.cu, or conv_direct.cu without cuDNN
void register_batch_norm_kernels(plugin::Registrar& r);  // kernels/batch_norm_cudnn.cu (built with cuDNN only)
void register_attention_kernels(plugin::Registrar& r);  // kernels/attention.cu
void register_rnn_kernels(plugin::Registrar& r);  // kernels/rnn_cudnn.cpp (built with cuDNN only)
void register_optim_kernels(plugin::Registrar& r);  // kernels/optim.cu: fused optimizer updates

}  // namespace loom::LOOM_GPU_NAMESPACE
