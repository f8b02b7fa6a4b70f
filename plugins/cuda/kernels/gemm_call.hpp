// One strided batched matrix product in cuBLAS's terms, and the backend
// that runs it: cuBLAS (gemm_cublas.cu) where the build has it, else the
// plugin's own tiled kernel (gemm_own.cu: the HIP build, which has no
// rocBLAS on Debian, and CUDA builds configured with
// LOOM_GPU_VENDOR_LIBRARIES=OFF). matmul.cu plans loom's products into
// these calls (gemm_plan.hpp); a backend only multiplies.
#pragma once

#include "vendor/gpu_runtime.hpp"

#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE::gemm {

// For b in [0, count): C_b = alpha op(first_b) op(second_b) + beta C_b, all
// column-major: element (r, c) of a matrix X with leading dimension ld is
// X[r + c ld], and op(X) is X or its transpose. op(first) is m x k,
// op(second) k x n, C m x n; matrix b starts stride_* elements after
// matrix b - 1 (0 repeats one matrix). beta == 0 means C is not read (NaN
// in it does not leak through). k >= 1.
struct Call {
  bool transpose_first = false, transpose_second = false;
  int64_t m = 0, n = 0, k = 0;
  const void* first = nullptr;
  int64_t ld_first = 1, stride_first = 0;
  const void* second = nullptr;
  int64_t ld_second = 1, stride_second = 0;
  void* c = nullptr;
  int64_t ldc = 1, stride_c = 0;
  int64_t count = 1;
  double alpha = 1, beta = 0;
};

// Queues `call` on `stream` (device `index` current); T is the storage type
// of all three matrices (__half, __nv_bfloat16, float or double), products
// accumulate in float for the 16-bit types. Throws plugin::Failure naming
// the device and `op`.
template <class T>
void strided_batched(const Call& call, cudaStream_t stream, int index, const char* op);

}  // namespace loom::LOOM_GPU_NAMESPACE::gemm
