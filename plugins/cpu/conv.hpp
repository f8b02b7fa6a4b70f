// Convolutions inside the CPU plugin: one problem description shared by the
// kernel entries (conv.cpp), the oneDNN path (conv_onednn.cpp) and the
// portable loops (conv_loop.cpp).
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>

namespace loom::cpu {

// What a convolution kernel computes. The backward passes are those of the
// forward (non-transposed) convolution: BackwardData writes the gradient of
// the input into `x` from dst's gradient in `y` and the weights in `w`;
// BackwardWeights writes the weights' gradient into `w` from `y` and the
// input in `x`.
enum class ConvPass { Forward, BackwardData, BackwardWeights };

// A 2-D convolution over [N, C, H, W] -> [N, O, OH, OW]; strides in elements.
// Forward: weight [O, C/groups, kH, kW]. Transposed: weight [C, O/groups,
// kH, kW] and output_padding is implied by OH/OW. The pass decides which of
// x, w, y is written (the others are read).
struct ConvProblem {
  int32_t dtype = 0;
  ConvPass pass = ConvPass::Forward;
  bool transposed = false;
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0, kH = 0, kW = 0, OH = 0, OW = 0, groups = 1;
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  void* x = nullptr;
  int64_t xs[4] = {};
  void* w = nullptr;
  int64_t ws[4] = {};
  const void* b = nullptr;  // nullptr: no bias (forward only)
  int64_t bs = 1;
  void* y = nullptr;
  int64_t ys[4] = {};
};

// oneDNN (float32, bfloat16), any pass; false when it declines (dtype,
// layout, or only its reference implementation), leaving the output
// untouched.
bool conv_onednn(const ConvProblem& p);
// Direct loops for every dtype, forward passes only; 16-bit floats compute
// in float32.
void conv_loop(const ConvProblem& p);

}  // namespace loom::cpu
