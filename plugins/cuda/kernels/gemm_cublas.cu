// gemm_call.hpp's products through cuBLAS: one
// cublasGemmStridedBatchedEx_64 per call. float32 uses TF32 tensor cores
// only when the plugin option allow_tf32 is on; float16 and bfloat16
// accumulate in float (cublas_handle.cpp also forbids reduced-precision
// split-K reductions).
#include "../runtime.hpp"
#include "cublas_handle.hpp"
#include "gemm_call.hpp"
#include "vendor/gpu_target.hpp"

#include <cublas_v2.h>

#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE::gemm {
namespace {

// The element types and accumulation cuBLAS is asked for.
struct BlasTypes {
  cudaDataType data;
  cublasComputeType_t compute;
};

template <class T>
BlasTypes blas_types() {
  if constexpr (std::is_same_v<T, double>) return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
  else if constexpr (std::is_same_v<T, __half>) return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  else
    return {CUDA_R_32F, options().allow_tf32.load(std::memory_order_relaxed) ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                              : CUBLAS_COMPUTE_32F};
}

}  // namespace

template <class T>
void strided_batched(const Call& g, cudaStream_t stream, int index, const char* op) {
  const BlasTypes types = blas_types<T>();
  using Scale = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const Scale alpha = static_cast<Scale>(g.alpha), beta = static_cast<Scale>(g.beta);
  check_cublas(cublasGemmStridedBatchedEx_64(
                   cublas_handle(index, stream), g.transpose_first ? CUBLAS_OP_T : CUBLAS_OP_N,
                   g.transpose_second ? CUBLAS_OP_T : CUBLAS_OP_N, g.m, g.n, g.k, &alpha, g.first, types.data,
                   g.ld_first, g.stride_first, g.second, types.data, g.ld_second, g.stride_second, &beta, g.c,
                   types.data, g.ldc, g.stride_c, g.count, types.compute, CUBLAS_GEMM_DEFAULT),
               index, op);
}

template void strided_batched<__half>(const Call&, cudaStream_t, int, const char*);
template void strided_batched<__nv_bfloat16>(const Call&, cudaStream_t, int, const char*);
template void strided_batched<float>(const Call&, cudaStream_t, int, const char*);
template void strided_batched<double>(const Call&, cudaStream_t, int, const char*);

}  // namespace loom::LOOM_GPU_NAMESPACE::gemm
