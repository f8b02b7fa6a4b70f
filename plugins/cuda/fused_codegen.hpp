// CUDA C++ for a fused elementwise region (plugin_api.h's LoomFusedRegion):
// one kernel, one thread per element in a grid-stride loop, each
// instruction a local variable. Pure C++ (no CUDA header), so the host-only
// tests generate and NVRTC-compile sources without a GPU.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>
#include <string>

namespace loom::cuda_fusion {

// Bounds of the generated kernel's parameter block.
inline constexpr int kMaxDims = 8;
inline constexpr int kMaxInputs = 16;
inline constexpr int kMaxOutputs = 4;

struct FusedSource {
  std::string code;      // the translation unit; its kernel is `loom_fused`
  std::string declined;  // non-empty: why this region is not generated (then `code` is empty)
};

// The source for `region`; `declined` says why not (an op this generator
// does not write, an integer division — whose by-zero error a kernel cannot
// report —, more inputs or outputs than the parameter block holds).
FusedSource generate(const LoomFusedRegion& region);

// The kernel's parameter block, as the generated code declares it (the
// launcher fills it): sizes of the merged iteration space, each input's
// strides over it (in elements) and base (data + byte_offset).
struct Params {
  int64_t n;
  int32_t ndim;
  int32_t contiguous;  // 1: every input is contiguous or a scalar: offsets are the index (or 0)
  int64_t shape[kMaxDims];
  int64_t strides[kMaxInputs][kMaxDims];
  const void* in[kMaxInputs];
  void* out[kMaxOutputs];
  int32_t scalar[kMaxInputs];  // 1: the input is one element broadcast everywhere
};

}  // namespace loom::cuda_fusion
