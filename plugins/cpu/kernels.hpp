// The CPU plugin's pieces as register.cpp sees them: the device type, one
// registration function per kernel family (the CUDA plugin's family names,
// each defined in the file named beside it), and the kernels other files
// share, `void(const LoomKernelCall&)`, which throw plugin::Failure on a bad
// call (plugin::kernel<> turns that into an error). What each kernel
// receives is docs/kernel_conventions.md.
#pragma once

#include <loom/plugin.hpp>

namespace loom::cpu {

// device.cpp: the "cpu" device type (host memory, one device, no streams).
const LoomDeviceTypeDesc& device_type_desc();

// ---- families, in register.cpp's order ----------------------------------------------
void register_fill_copy_kernels(plugin::Registrar& r);     // copy_cast.cpp: fill_, copy_
void register_random_kernels(plugin::Registrar& r);        // random.cpp: uniform_, normal_, dropout
void register_matmul_kernels(plugin::Registrar& r);        // matmul.cpp: matmul, mm, bmm, dot
void register_softmax_kernels(plugin::Registrar& r);       // nn_softmax.cpp: softmax, log_softmax and their backward
void register_layer_norm_kernels(plugin::Registrar& r);    // nn_norm.cpp: layer_norm, rms_norm and their backward
void register_cross_entropy_kernels(plugin::Registrar& r);  // nn_cross_entropy.cpp: cross_entropy and its backward
// elementwise.cpp: add, sub, mul, div, outer, neg, relu, exp, and the five below
// ("Elementwise unary ops", "Elementwise binary and ternary ops").
void register_elementwise_kernels(plugin::Registrar& r);
void register_unary_kernels(plugin::Registrar& r);         // unary.cpp: abs ... isfinite, clamp, nan_to_num
void register_unary_float_kernels(plugin::Registrar& r);   // unary_float.cpp: exp2 ... erf, gelu, silu ...
void register_activation_backward_kernels(plugin::Registrar& r);  // activation_backward.cpp: _silu_backward ...
void register_binary_kernels(plugin::Registrar& r);        // binary.cpp: the binary table rows, lerp, div_
void register_compare_kernels(plugin::Registrar& r);       // binary_compare.cpp: comparisons, logical and bit ops, where
void register_reduce_kernels(plugin::Registrar& r);        // reduce.cpp: sum and the other reductions and scans
// index_shape.cpp: the five below ("Indexing", "Shape").
void register_index_shape_kernels(plugin::Registrar& r);
void register_indexing_kernels(plugin::Registrar& r);      // indexing_kernels.cpp: gather, index_select, scatters
void register_masked_kernels(plugin::Registrar& r);        // indexing_masked.cpp: masked_fill_, nonzero, masked_select
void register_shape_kernels(plugin::Registrar& r);         // shape_kernels.cpp: cat, flip, roll, tril/triu
void register_sort_kernels(plugin::Registrar& r);          // sort.cpp: sort, topk
void register_pad_embedding_kernels(plugin::Registrar& r);  // pad_kernels.cpp: pad, embedding
void register_pool_kernels(plugin::Registrar& r);          // pool.cpp: the 2-D pools
void register_conv_kernels(plugin::Registrar& r);          // conv.cpp: conv1d, conv2d, conv_transpose2d, backward
void register_batch_norm_kernels(plugin::Registrar& r);    // batch_norm.cpp: batch_norm and its backward
void register_rnn_kernels(plugin::Registrar& r);           // rnn.cpp: _rnn, _rnn_backward
void register_attention_kernels(plugin::Registrar& r);     // attention.cpp: the fused attention and its gradient
void register_optim_kernels(plugin::Registrar& r);         // optim_kernels.cpp: fused optimizer updates

// ---- kernels shared between files ---------------------------------------------------
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

// reduce.cpp
void sum(const LoomKernelCall& c);

// matmul.cpp (dispatch, own loop) and matmul_onednn.cpp (oneDNN path)
void matmul(const LoomKernelCall& c);

// random.cpp
void uniform_(const LoomKernelCall& c);
void normal_(const LoomKernelCall& c);

}  // namespace loom::cpu
