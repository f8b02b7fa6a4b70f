// The nn kernels (softmax, layer_norm and rms_norm, cross_entropy, rnn), one declaration
// per kernel, grouped by the file that defines and registers it. Each is
// `void(const LoomKernelCall&)` and throws plugin::Failure on a bad call.
// What each receives is docs/kernel_conventions.md, "Nn".
#pragma once

#include <loom/plugin_api.h>

namespace loom::cpu {

// nn_softmax.cpp
void softmax(const LoomKernelCall& c);
void log_softmax(const LoomKernelCall& c);

// nn_softmax_backward.cpp
void softmax_backward(const LoomKernelCall& c);      // op _softmax_backward
void log_softmax_backward(const LoomKernelCall& c);  // op _log_softmax_backward

// nn_norm.cpp
void layer_norm(const LoomKernelCall& c);
void rms_norm(const LoomKernelCall& c);

// nn_norm_backward.cpp
void layer_norm_backward(const LoomKernelCall& c);  // op _layer_norm_backward
void rms_norm_backward(const LoomKernelCall& c);    // op _rms_norm_backward

// nn_cross_entropy.cpp (class-index targets; float32 and float64)
void cross_entropy(const LoomKernelCall& c);
void cross_entropy_backward(const LoomKernelCall& c);  // op _cross_entropy_backward

// rnn.cpp (float32; other dtypes run the core's composite)
void rnn(const LoomKernelCall& c);           // op _rnn
void rnn_backward(const LoomKernelCall& c);  // op _rnn_backward

}  // namespace loom::cpu
