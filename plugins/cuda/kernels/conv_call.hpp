// Reading a convolution kernel call (docs/kernel_conventions.md,
// "Convolution and pooling") as one pass of a forward convolution
// (conv_plan.hpp): which of the call's tensors is x, w and y, where its
// window parameters sit among the values. Host code without cuDNN, so
// tests/conv_plan_test.cu checks the mapping of every op.
#pragma once

#include "vendor/gpu_target.hpp"
#include "conv_plan.hpp"
#include "int_pair.hpp"

#include <loom/plugin.hpp>

#include <string>

namespace loom::LOOM_GPU_NAMESPACE::conv {

enum class ConvOp { Conv2d, ConvTranspose2d, BackwardInput, BackwardWeight };

// A tensor of the call: inputs[0], inputs[1] or outputs[0].
enum class Slot { Input0, Input1, Output };

struct OpLayout {
  const char* name;
  Pass pass;
  Slot x, w, y;
  int inputs;  // the call's input count (conv2d and conv_transpose2d: with the bias)
  int stride_at, padding_at, dilation_at, groups_at;
};

// conv1d / conv2d: (input, weight, bias), values stride, padding, dilation,
// groups. conv_transpose2d: its input is the forward's y, its output the
// forward's x; values stride, padding, output_padding, groups, dilation.
// _conv2d_backward_input / _weight: (grad_output, weight or input), values
// size, stride, padding, dilation, groups.
constexpr OpLayout layout_of(ConvOp op) {
  switch (op) {
    case ConvOp::Conv2d: return {"conv2d", Pass::Forward, Slot::Input0, Slot::Input1, Slot::Output, 3, 0, 1, 2, 3};
    case ConvOp::ConvTranspose2d:
      return {"conv_transpose2d", Pass::BackwardData, Slot::Output, Slot::Input1, Slot::Input0, 3, 0, 1, 4, 3};
    case ConvOp::BackwardInput:
      return {"_conv2d_backward_input", Pass::BackwardData, Slot::Output, Slot::Input1, Slot::Input0, 2, 1, 2, 3, 4};
    case ConvOp::BackwardWeight:
      break;
  }
  return {"_conv2d_backward_weight", Pass::BackwardFilter, Slot::Input1, Slot::Output, Slot::Input0, 2, 1, 2, 3, 4};
}

inline const LoomTensorDesc& tensor_at(const LoomKernelCall& c, Slot s) {
  return s == Slot::Input0 ? c.inputs[0] : s == Slot::Input1 ? c.inputs[1] : c.outputs[0];
}

inline Dims4 dims_of(const LoomTensorDesc& t) {
  Dims4 d{};
  for (int i = 0; i < 4; ++i) {
    d.size[i] = t.shape[i];
    d.stride[i] = t.strides[i];
  }
  return d;
}

// The pass's problem (dtype: the output's). INVALID_ARGUMENT naming the op
// when a tensor is missing or not 4-D, dtypes differ, or a value has the
// wrong kind; shapes are checked by decline_reason.
inline Problem read_problem(const LoomKernelCall& c, ConvOp op) {
  const OpLayout l = layout_of(op);
  const auto fail = [&](const std::string& what) {
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + l.name + ": " + what);
  };
  if (c.num_inputs < l.inputs || c.num_outputs < 1)
    fail("expected " + std::to_string(l.inputs) + " inputs and an output, got " + std::to_string(c.num_inputs) +
         " and " + std::to_string(c.num_outputs));
  const int32_t dtype = c.outputs[0].dtype;
  for (int i = 0; i < l.inputs; ++i) {
    const LoomTensorDesc& t = c.inputs[i];
    if (plugin::is_absent(t)) continue;  // conv2d's bias only (the others are required by the schema)
    if (t.dtype != dtype)
      fail("input " + std::to_string(i) + " is " + plugin::dtype_name(t.dtype) + ", the output " +
           plugin::dtype_name(dtype));
  }
  for (const Slot s : {Slot::Input0, Slot::Input1, Slot::Output})
    if (tensor_at(c, s).ndim != 4) fail("expected 4-D views, got a " + std::to_string(tensor_at(c, s).ndim) + "-D one");
  Problem p;
  p.dtype = dtype;
  p.pass = l.pass;
  p.x = dims_of(tensor_at(c, l.x));
  p.w = dims_of(tensor_at(c, l.w));
  p.y = dims_of(tensor_at(c, l.y));
  const int64_t *s = int_pair(c, l.stride_at, l.name, "stride"), *pd = int_pair(c, l.padding_at, l.name, "padding"),
                *d = int_pair(c, l.dilation_at, l.name, "dilation");
  for (int i = 0; i < 2; ++i) {
    p.stride[i] = s[i];
    p.padding[i] = pd[i];
    p.dilation[i] = d[i];
  }
  if (l.groups_at >= c.num_values || c.values[l.groups_at].kind != LOOM_VALUE_INT) fail("expected 'groups' as an int");
  p.groups = c.values[l.groups_at].u.i;
  return p;
}

}  // namespace loom::LOOM_GPU_NAMESPACE::conv
