// What both convolution back ends do with a call before their pass runs
// (conv_cudnn.cu through cuDNN, conv_direct.cu with own kernels where no
// vendor library is built in): the problem and its three operands read from
// the call (conv_call.hpp says which tensor is which), the optional bias
// checked against the channels the pass writes, and whether there is
// anything to write or to sum. Host code; the back ends differ only in what
// they do with it, and they register the same ops (register_family).
#pragma once

#include "conv_call.hpp"
#include "conv_plan.hpp"
#include "dtype.cuh"
#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>

#include <cstdint>
#include <string>

namespace loom::LOOM_GPU_NAMESPACE::conv {

// One operand in device memory: where it starts and its 4-D layout.
struct Operand {
  void* data;
  Dims4 dims;
};

inline int64_t numel4(const Dims4& t) { return t.size[0] * t.size[1] * t.size[2] * t.size[3]; }

// A convolution call read as one pass.
struct Call {
  const char* op;  // the op's name, for messages
  Problem problem;
  Operand x, w, y;
  const LoomTensorDesc* bias;  // conv2d's and conv_transpose2d's bias ([channels written]), or nullptr
  bool output_empty;           // nothing to write: the call is done
  bool reduction_empty;        // an operand is empty but not the output: it is all zeros (or the bias)
};

// INVALID_ARGUMENT (from read_problem) when the call's tensors or values
// are malformed; the shapes are not checked here (shape_problem).
inline Call read_call(const LoomKernelCall& c, ConvOp kind) {
  const OpLayout l = layout_of(kind);
  const Problem p = read_problem(c, kind);
  Call k{l.name,
         p,
         {plugin::data_ptr<void>(tensor_at(c, l.x)), p.x},
         {plugin::data_ptr<void>(tensor_at(c, l.w)), p.w},
         {plugin::data_ptr<void>(tensor_at(c, l.y)), p.y},
         l.inputs == 3 && !plugin::is_absent(c.inputs[2]) ? &c.inputs[2] : nullptr,
         false,
         false};
  k.output_empty = numel4(dims_of(c.outputs[0])) == 0;
  k.reduction_empty = !k.output_empty && (numel4(p.x) == 0 || numel4(p.w) == 0 || numel4(p.y) == 0);
  return k;
}

// The channels a bias adds to: y's for the forward, x's for backward data
// (conv_transpose2d's output).
inline int64_t bias_channels(const Call& k) {
  return k.problem.pass == Pass::Forward ? k.problem.y.size[1] : k.problem.x.size[1];
}

// INVALID_ARGUMENT unless the bias, when there is one, is [bias_channels].
inline void check_bias(const Call& k) {
  const int64_t channels = bias_channels(k);
  if (k.bias != nullptr && (k.bias->ndim != 1 || k.bias->shape[0] != channels))
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + k.op +
                                                            ": expected a bias of size [" +
                                                            std::to_string(channels) + "]");
}

// A back end's work on a call that has something to write.
using RunCall = void (*)(const LoomKernelCall& c, const Call& k);

// The kernel of one op: the call read, and handed to the back end unless
// its output is empty (then there is nothing to do).
template <ConvOp kOp, RunCall kRun>
void serve(const LoomKernelCall& c) {
  const Call k = read_call(c, kOp);
  if (!k.output_empty) kRun(c, k);
}

// The family's registrations for this build's device type, floating dtypes
// (integer convolutions run on the CPU), each op served by kRun (conv1d
// arrives as conv2d with height 1, so the conv2d kernel serves both).
template <RunCall kRun>
void register_family(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("conv1d", LOOM_GPU_NAME, kernel<serve<ConvOp::Conv2d, kRun>>, kFloatingMask);
  r.kernel("conv2d", LOOM_GPU_NAME, kernel<serve<ConvOp::Conv2d, kRun>>, kFloatingMask);
  r.kernel("conv_transpose2d", LOOM_GPU_NAME, kernel<serve<ConvOp::ConvTranspose2d, kRun>>, kFloatingMask);
  r.kernel("_conv2d_backward_input", LOOM_GPU_NAME, kernel<serve<ConvOp::BackwardInput, kRun>>, kFloatingMask);
  r.kernel("_conv2d_backward_weight", LOOM_GPU_NAME, kernel<serve<ConvOp::BackwardWeight, kRun>>, kFloatingMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::conv
