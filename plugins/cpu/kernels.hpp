// The CPU plugin's pieces as register.cpp sees them: the device type and one
// function per kernel, `void(const LoomKernelCall&)`, which throws
// plugin::Failure on a bad call (plugin::kernel<> turns that into an error).
// What each kernel receives is docs/kernel_conventions.md.
#pragma once

#include <loom/plugin.hpp>

namespace loom::cpu {

// device.cpp: the "cpu" device type (host memory, one device, no streams).
const LoomDeviceTypeDesc& device_type_desc();

// copy_cast.cpp
void fill_(const LoomKernelCall& c);
void copy_(const LoomKernelCall& c);

// elementwise.cpp
void add(const LoomKernelCall& c);
void sub(const LoomKernelCall& c);
void mul(const LoomKernelCall& c);
void div(const LoomKernelCall& c);
void neg(const LoomKernelCall& c);
void relu(const LoomKernelCall& c);
void exp(const LoomKernelCall& c);

// unary.cpp: abs ... isfinite, clamp, nan_to_num and their in-place forms
// (docs/kernel_conventions.md, "Elementwise unary ops").
void register_unary_kernels(plugin::Registrar& r);

// binary.cpp: div modes, remainder, pow, maximum/minimum, atan2,
// comparisons, logical and bitwise ops, where, lerp and in-place forms
// ("Elementwise binary and ternary ops").
void register_binary_kernels(plugin::Registrar& r);

// reduce.cpp
void sum(const LoomKernelCall& c);
void register_reduce_kernels(plugin::Registrar& r);  // the other reductions and scans (reduce*.cpp)

// indexing_kernels.cpp and indexing_masked.cpp: gather, index_select, scatter_,
// scatter_add_, index_add_, masked_fill_, nonzero, masked_select ("Indexing").
void register_indexing_kernels(plugin::Registrar& r);
// shape_kernels.cpp: cat, flip, roll, tril/triu (+ in place); it also
// registers sort.cpp's sort and topk ("Shape").
void register_shape_kernels(plugin::Registrar& r);
void register_sort_kernels(plugin::Registrar& r);
// nn_softmax.cpp: softmax, log_softmax, and layer_norm of nn_norm.cpp
// ("Nn"; the kernels are declared in nn.hpp).
void register_nn_kernels(plugin::Registrar& r);

// matmul.cpp (dispatch, own loop) and matmul_onednn.cpp (oneDNN path)
void matmul(const LoomKernelCall& c);

// pad_kernels.cpp, embedding_kernels.cpp, dropout_kernels.cpp (nn_misc_kernels.hpp)
void register_nn_misc_kernels(plugin::Registrar& r);
// conv.cpp (conv_loop.cpp, conv_onednn.cpp, pool.cpp): conv1d, conv2d,
// conv_transpose2d and the 2-D pools ("Convolution and pooling").
void register_conv_kernels(plugin::Registrar& r);
void register_optim_kernels(plugin::Registrar& r);  // fused optimizer updates (optim_kernels.cpp)

// random.cpp
void uniform_(const LoomKernelCall& c);
void normal_(const LoomKernelCall& c);

}  // namespace loom::cpu
