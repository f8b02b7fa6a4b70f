// What the device-side tests (loom_cuda_device_test) share: whether a GPU
// is there (without one, each case says why in a WARN and returns), and
// the device they run on.
#pragma once

#include <catch2/catch.hpp>
#include <loom/loom.h>

namespace loom_cuda_test {

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

inline loom::Tensor on_gpu(const loom::Tensor& t) { return t.to(gpu()); }

}  // namespace loom_cuda_test
