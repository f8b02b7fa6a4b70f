// What the device tests through loom share: whether there is a GPU (a case
// without one says why and returns) and moving operands onto it.
#pragma once

#include <catch2/catch.hpp>
#include <loom/loom.h>

namespace loom_cuda_test {

// True with a CUDA device; otherwise WARNs the plugin's reason ("skipped: ...").
inline bool have_gpu() {
  (void)loom::device_type_slot("cuda");
  if (loom::device_count("cuda") > 0) return true;
  WARN("skipped: no CUDA device (" << loom::device_unavailable_reason("cuda") << ")");
  return false;
}

inline const loom::Device& gpu() {
  static const loom::Device dev("cuda:0");
  return dev;
}

// `t` on cuda:0; an undefined tensor (an absent Tensor?) stays undefined.
inline loom::Tensor on_gpu(const loom::Tensor& t) { return t.defined() ? t.to(gpu()) : t; }

}  // namespace loom_cuda_test
