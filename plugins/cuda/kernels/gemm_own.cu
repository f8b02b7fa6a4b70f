// gemm_call.hpp's products through the plugin's own tiled kernel
// (gemm_tile_ops.cuh): the matrix products of builds without a vendor BLAS
// (the HIP build on Debian, which packages no rocBLAS / hipBLAS; CUDA with
// LOOM_GPU_VENDOR_LIBRARIES=OFF). One launch per call; blocks walk the
// call's tiles (every batch entry's) with a grid stride, so neither the
// batch count nor the matrix size is bounded by a grid dimension.
#include "../cuda_error.hpp"
#include "gemm_tile_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <algorithm>

namespace loom::LOOM_GPU_NAMESPACE::gemm {
namespace {

template <class T>
__global__ void __launch_bounds__(kThreads) gemm_kernel(Call g, int64_t down, int64_t across, int64_t tiles) {
  __shared__ Panels<T> panels;
  const int tid = static_cast<int>(threadIdx.x);
  for (int64_t n = blockIdx.x; n < tiles; n += gridDim.x) {
    const Tile<T> t = tile_of<T>(g, n, down, across);
    Accumulator<T> acc{};
    for (int64_t k0 = 0; k0 < g.k; k0 += kTileK) {
      load_step(g, t, k0, tid, panels);
      __syncthreads();
      multiply_step(panels, tid, acc);
      __syncthreads();
    }
    store(g, t, tid, acc);
  }
}

}  // namespace

template <class T>
void strided_batched(const Call& g, cudaStream_t stream, int index, const char* op) {
  const int64_t down = tiles_down(g), across = tiles_across(g), tiles = down * across * g.count;
  if (tiles == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{1} << 20));
  gemm_kernel<T><<<blocks, kThreads, 0, stream>>>(g, down, across, tiles);
  check(cudaGetLastError(), index, op);  // a launch failure (the kernel itself reports nothing)
}

template void strided_batched<__half>(const Call&, cudaStream_t, int, const char*);
template void strided_batched<__nv_bfloat16>(const Call&, cudaStream_t, int, const char*);
template void strided_batched<float>(const Call&, cudaStream_t, int, const char*);
template void strided_batched<double>(const Call&, cudaStream_t, int, const char*);

}  // namespace loom::LOOM_GPU_NAMESPACE::gemm
