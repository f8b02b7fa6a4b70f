// Executes a ReducePlan (reduce_plan.hpp) with an op of reduce_ops.cuh:
//
//   run_reduction(op, plan, input, device_index, stream, "sum")
//
// One kernel for both layouts (a uniform branch on the launch shape):
//   inner: the lanes of a warp (or of a whole block, for long slices) walk
//          one output's slice together, with 16-byte vector loads where the
//          slices are contiguous and aligned, then combine by warp shuffles
//          (and shared memory across warps);
//   outer: adjacent threads take adjacent outputs, so every step reads a
//          coalesced row; the block's other rows of threads share the
//          slices and combine through shared memory.
// Slices too long for the outputs to fill the device are split over
// gridDim.y blocks; a second kernel combines the partials per output in
// split order, so results never depend on timing.
#pragma once

#include "../runtime.hpp"
#include "loops.cuh"  // Vec
#include "reduce.hpp"
#include "reduce_plan.hpp"
#include "warp.cuh"

#include "vendor/gpu_runtime.hpp"

#include <string>
#include <type_traits>

namespace loom::LOOM_GPU_NAMESPACE {
namespace detail {

// Combines `acc` over the `width` (a power of two <= 32) lanes of each
// aligned group of a warp; lane 0 of the group ends with the result.
template <class Op>
__device__ inline void warp_combine(const Op& op, typename Op::Acc& acc, int width) {
  for (int d = width / 2; d > 0; d /= 2) op.combine(acc, warp::down(acc, d, width));
}

struct ReduceArgs {
  ReducePlan plan;
  ReduceLaunch launch;
  void* partials;  // Acc[num_outputs * splits] when splits > 1
};

// Folds reduced indices r0 + lane, r0 + lane + lanes, ... below r1.
template <class Op>
__device__ inline void fold_slice(const Op& op, typename Op::Acc& acc, const typename Op::In* base,
                                  const DimWalk<1>& red, int64_t r0, int64_t r1, int lane, int lanes,
                                  int vec) {
  using In = typename Op::In;
  constexpr int V = 16 / sizeof(In);
  if constexpr (V > 1) {
    if (vec == V) {  // contiguous, 16-byte aligned, r0 % V == 0
      const Vec<In, V>* pv = reinterpret_cast<const Vec<In, V>*>(base);
      const int64_t vend = r1 / V;
      int64_t v = r0 / V + lane;
      for (; v + 3 * int64_t{lanes} < vend; v += 4 * int64_t{lanes}) {  // four loads in flight
        Vec<In, V> x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) x[u] = pv[v + u * lanes];
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int j = 0; j < V; ++j) op.add(acc, x[u].v[j], (v + u * lanes) * V + j);
      }
      for (; v < vend; v += lanes) {
        const Vec<In, V> x = pv[v];
#pragma unroll
        for (int j = 0; j < V; ++j) op.add(acc, x.v[j], v * V + j);
      }
      // Fewer than V elements left, in the split that holds the slice's end
      // (vend * V >= r0, since r0 is a multiple of V).
      for (int64_t t = vend * V + lane; t < r1; t += lanes) op.add(acc, base[t], t);
      return;
    }
  }
  if (red.ndim <= 1) {
    const int64_t s = red.strides[0][0];
    int64_t r = r0 + lane;
    for (; r + 3 * int64_t{lanes} < r1; r += 4 * int64_t{lanes}) {
      In x[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) x[u] = base[(r + u * lanes) * s];
#pragma unroll
      for (int u = 0; u < 4; ++u) op.add(acc, x[u], r + u * lanes);
    }
    for (; r < r1; r += lanes) op.add(acc, base[r * s], r);
  } else if (r0 + lane < r1) {
    WalkCursor cur(red, r0 + lane);
    for (int64_t r = r0 + lane; r < r1; r += lanes, cur.advance(lanes)) op.add(acc, base[cur.offset()], r);
  }
}

template <class Op>
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(Op op, const typename Op::In* in, ReduceArgs args) {
  using Acc = typename Op::Acc;
  __shared__ Acc shared[kReduceThreads];
  const ReducePlan& plan = args.plan;
  const ReduceLaunch& L = args.launch;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t o = L.inner ? blockIdx.x * int64_t{L.block_y} + ty : blockIdx.x * int64_t{L.block_x} + tx;
  const int lane = L.inner ? tx : ty, lanes = L.inner ? L.block_x : L.block_y;
  const int64_t split = blockIdx.y;
  const int64_t r0 = split * L.split_len;
  const int64_t r1 = r0 + L.split_len < plan.num_reduced ? r0 + L.split_len : plan.num_reduced;
  Acc acc = op.init();
  int64_t off[3] = {0, 0, 0};
  const bool live = o < plan.num_outputs;
  if (live) {
    plan.kept.offsets(o, off);
    fold_slice(op, acc, in + off[0], plan.red, r0, r1, lane, lanes, L.vec);
  }
  // Every thread takes part (dead ones with the identity): shuffles need
  // the whole warp, barriers the whole block.
  if (L.inner) {
    warp_combine(op, acc, L.block_x < 32 ? L.block_x : 32);
    if (L.block_x > 32) {  // block_y == 1: one partial per warp, then warp 0
      const int warp = tx / 32, nwarps = L.block_x / 32;
      if (tx % 32 == 0) shared[warp] = acc;
      __syncthreads();
      if (warp != 0) return;
      acc = tx < nwarps ? shared[tx] : op.init();
      warp_combine(op, acc, 32);
    }
  } else {
    shared[ty * L.block_x + tx] = acc;
    __syncthreads();
    for (int s = L.block_y / 2; s > 0; s /= 2) {
      if (ty < s) op.combine(shared[ty * L.block_x + tx], shared[(ty + s) * L.block_x + tx]);
      __syncthreads();
    }
    acc = shared[tx];
  }
  if (lane != 0 || !live) return;
  if (L.splits == 1) op.store(acc, plan.num_reduced, off[1], off[2]);
  else static_cast<Acc*>(args.partials)[o * L.splits + split] = acc;
}

// One warp per output: partials in split order, lanes strided, then a
// fixed shuffle tree.
template <class Op>
__global__ void __launch_bounds__(kReduceThreads) combine_partials_kernel(Op op, ReduceArgs args) {
  using Acc = typename Op::Acc;
  const int64_t o = blockIdx.x * int64_t{blockDim.y} + threadIdx.y;
  const int64_t splits = args.launch.splits;
  Acc acc = op.init();
  if (o < args.plan.num_outputs) {
    const Acc* p = static_cast<const Acc*>(args.partials) + o * splits;
    for (int64_t s = threadIdx.x; s < splits; s += 32) op.combine(acc, p[s]);
  }
  warp_combine(op, acc, 32);
  if (threadIdx.x != 0 || o >= args.plan.num_outputs) return;
  int64_t off[3];
  args.plan.kept.offsets(o, off);
  op.store(acc, args.plan.num_reduced, off[1], off[2]);
}

}  // namespace detail

// Runs `op` over `plan` on `stream` of device `index`. Throws
// INVALID_ARGUMENT for an empty slice when the op has no identity.
template <class Op>
void run_reduction(const Op& op, const ReducePlan& plan, const LoomTensorDesc& input, int index,
                   cudaStream_t stream, const char* name) {
  using Acc = typename Op::Acc;
  if (plan.num_outputs == 0) return;
  if (plan.num_reduced == 0 && !Op::kHasIdentity)
    throw plugin::Failure(LOOM_STATUS_INVALID_ARGUMENT,
                          std::string(LOOM_GPU_NAME " ") + name + ": reduction over zero elements has no identity");
  use_device(index);
  const auto* in = plugin::data_ptr<const typename Op::In>(input);
  detail::ReduceArgs args{plan, {}, nullptr};
  // Blocks of this kernel one multiprocessor holds (registers decide), asked once per op type.
  static const int per_sm = [] {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, detail::reduce_kernel<Op>, kReduceThreads, 0) != cudaSuccess ||
        n <= 0) {
      (void)cudaGetLastError();  // a guess only shapes the launch
      n = 4;
    }
    return n;
  }();
  args.launch = choose_launch(plan, vector_width(plan, in, sizeof(typename Op::In)),
                              int64_t{multiprocessor_count(index)} * per_sm);
  const ReduceLaunch& L = args.launch;
  if (L.grid_x > 0x7fffffff)
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + name + ": too many outputs for one grid");
  gpu::CachingAllocator* alloc = nullptr;
  if (L.splits > 1) {
    alloc = &allocator(index);
    args.partials = alloc->allocate(static_cast<size_t>(plan.num_outputs * L.splits) * sizeof(Acc), stream);
  }
  const dim3 block(static_cast<unsigned>(L.block_x), static_cast<unsigned>(L.block_y));
  const dim3 grid(static_cast<unsigned>(L.grid_x), static_cast<unsigned>(L.splits));
  detail::reduce_kernel<Op><<<grid, block, 0, stream>>>(op, in, args);
  if (L.splits > 1) {
    const dim3 cblock(32, kReduceThreads / 32);
    const int64_t cgrid = (plan.num_outputs + cblock.y - 1) / cblock.y;
    detail::combine_partials_kernel<Op><<<static_cast<unsigned>(cgrid), cblock, 0, stream>>>(op, args);
    // Freed at once: the allocator hands the block out again on this
    // stream only, after the kernels queued here.
    alloc->free(args.partials);
  }
  check_launch(name);
}

}  // namespace loom::LOOM_GPU_NAMESPACE
