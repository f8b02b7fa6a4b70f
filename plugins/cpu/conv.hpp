// Convolutions inside the CPU plugin: one problem description shared by the
// kernel entries (conv.cpp), the oneDNN path (conv_onednn.cpp) and the
// portable loops (conv_loop.cpp).
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>

namespace loom::cpu {

// A 2-D convolution over [N, C, H, W] -> [N, O, OH, OW]; strides in elements.
// Forward: weight [O, C/groups, kH, kW]. Transposed: weight [C, O/groups,
// kH, kW] and output_padding is implied by OH/OW.
struct ConvProblem {
  int32_t dtype = 0;
  bool transposed = false;
  int64_t N = 0, C = 0, H = 0, W = 0, O = 0, kH = 0, kW = 0, OH = 0, OW = 0, groups = 1;
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dil[2] = {1, 1};
  const void* x = nullptr;
  int64_t xs[4] = {};
  const void* w = nullptr;
  int64_t ws[4] = {};
  const void* b = nullptr;  // nullptr: no bias
  int64_t bs = 1;
  void* y = nullptr;
  int64_t ys[4] = {};
};

// oneDNN (float32, bfloat16); false when it declines (dtype, layout, or only
// its reference implementation), leaving the output untouched.
bool conv_onednn(const ConvProblem& p);
// Direct loops for every dtype; 16-bit floats compute in float32.
void conv_loop(const ConvProblem& p);

}  // namespace loom::cpu
