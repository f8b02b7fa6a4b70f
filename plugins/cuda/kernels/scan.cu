// cumsum and cumprod on CUDA: inclusive scans along one dim, output in the
// input's shape and dtype, accumulated as ScanOp (reduce_ops.cuh) says.
// Two shapes of work, chosen by plan_scan (reduce_plan.hpp):
//   columns: one thread per line walks down the scan dim; adjacent threads
//            hold adjacent lines, so each step reads one coalesced row;
//   lines:   a warp scans a line 32 elements at a time (shuffle scan, the
//            running total carried from chunk to chunk).
// Too few lines to fill the device: each line is cut into tiles (of a
// thread or of a warp); pass 1 folds every tile, pass 2 scans the tile
// totals of each line, pass 3 scans every tile from the total before it.
// A scan runs in a fixed order for a given shape, so results never depend
// on timing.
#include "../runtime.hpp"
#include "dtype.cuh"
#include "reduce.hpp"
#include "reduce_ops.cuh"
#include "reduce_plan.hpp"
#include "warp.cuh"

#include <loom/plugin/strided.hpp>

#include "vendor/gpu_runtime.hpp"

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

constexpr int kWarpsPerBlock = 8;

// The columns layout: thread t takes line t % num_lines, tile t / num_lines
// (adjacent threads, adjacent lines), elements [begin, end) of it.
struct ThreadTile {
  int64_t line, tile, begin, end;
  bool live;
};
__device__ inline ThreadTile thread_tile(const ScanPlan& p) {
  const int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  ThreadTile r;
  r.tile = t / p.num_lines;
  r.line = t - r.tile * p.num_lines;
  r.live = r.tile < p.tiles;
  p.tile_range(r.tile, r.begin, r.end);
  return r;
}

// Folds (Scan = false) or scans (true, from `carry`) a column tile, four
// loads in flight.
template <bool Scan, class S>
__device__ inline typename S::Acc walk_column(const S& s, const typename S::In* __restrict__ x,
                                              typename S::T* __restrict__ y, const ScanPlan& p, int64_t b,
                                              int64_t e, typename S::Acc acc) {
  int64_t r = b;
  for (; r + 4 <= e; r += 4) {
    typename S::In v[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = x[(r + u) * p.in_stride];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      acc = s.op.combine(acc, s.op.value(v[u]));
      if constexpr (Scan) y[(r + u) * p.out_stride] = s.op.result(acc);
    }
  }
  for (; r < e; ++r) {
    acc = s.op.combine(acc, s.op.value(x[r * p.in_stride]));
    if constexpr (Scan) y[r * p.out_stride] = s.op.result(acc);
  }
  return acc;
}

// Pass 1 of tiled columns: totals[line * tiles + tile] = fold of the tile.
template <class S>
__global__ void column_totals_kernel(S s, const typename S::In* in, ScanPlan p, typename S::Acc* totals) {
  const ThreadTile t = thread_tile(p);
  if (!t.live) return;
  int64_t off[2];
  p.lines.offsets(t.line, off);
  totals[t.line * p.tiles + t.tile] = walk_column<false>(s, in + off[0], nullptr, p, t.begin, t.end, s.op.init());
}

// The columns scan (pass 3 when tiled: from the total of the tiles before).
template <class S>
__global__ void scan_columns_kernel(S s, const typename S::In* in, typename S::T* out, ScanPlan p,
                                    const typename S::Acc* totals) {
  const ThreadTile t = thread_tile(p);
  if (!t.live) return;
  int64_t off[2];
  p.lines.offsets(t.line, off);
  const typename S::Acc carry = t.tile > 0 ? totals[t.line * p.tiles + t.tile - 1] : s.op.init();
  walk_column<true>(s, in + off[0], out + off[1], p, t.begin, t.end, carry);
}

// The warp of this thread: {line, tile} and the tile's [begin, end).
struct WarpTile {
  int64_t line, tile, begin, end;
  bool live;
};
__device__ inline WarpTile warp_tile(const ScanPlan& p) {
  const int64_t w = blockIdx.x * int64_t{kWarpsPerBlock} + threadIdx.y;
  WarpTile t;
  t.line = w / p.tiles;
  t.tile = w - t.line * p.tiles;
  t.live = t.line < p.num_lines;
  p.tile_range(t.tile, t.begin, t.end);
  return t;
}

// Pass 1 of warp tiles: totals[line * tiles + tile] = fold of the tile.
template <class S>
__global__ void tile_totals_kernel(S s, const typename S::In* in, ScanPlan p, typename S::Acc* totals) {
  using Acc = typename S::Acc;
  const WarpTile t = warp_tile(p);
  const int lane = threadIdx.x;
  Acc acc = s.op.init();
  if (t.live) {
    int64_t off[2];
    p.lines.offsets(t.line, off);
    for (int64_t r = t.begin + lane; r < t.end; r += 32) acc = s.op.combine(acc, s.op.value(in[off[0] + r * p.in_stride]));
  }
  for (int d = 16; d > 0; d /= 2) acc = s.op.combine(acc, warp::down(acc, d));
  if (lane == 0 && t.live) totals[t.line * p.tiles + t.tile] = acc;
}

// Inclusive scan of 32 values across the warp, lane order.
template <class Op, class Acc>
__device__ inline Acc warp_scan(const Op& op, Acc v, int lane) {
  for (int d = 1; d < 32; d *= 2) {
    const Acc u = warp::up(v, d);
    if (lane >= d) v = op.combine(u, v);
  }
  return v;
}

// Pass 2 of tiles (warps or columns): each line's tile totals, scanned in
// place by one warp.
template <class S>
__global__ void scan_totals_kernel(S s, ScanPlan p, typename S::Acc* totals) {
  using Acc = typename S::Acc;
  const int64_t line = blockIdx.x * int64_t{kWarpsPerBlock} + threadIdx.y;
  if (line >= p.num_lines) return;  // whole warps leave together
  const int lane = threadIdx.x;
  Acc* t = totals + line * p.tiles;
  Acc carry = s.op.init();
  for (int64_t b = 0; b < p.tiles; b += 32) {
    const int64_t i = b + lane;
    Acc v = warp_scan(s.op, i < p.tiles ? t[i] : s.op.init(), lane);
    v = s.op.combine(carry, v);
    if (i < p.tiles) t[i] = v;
    carry = warp::from_lane(v, 31);
  }
}

// The scan proper (lines, and pass 3 of tiles): a warp per tile, 32
// elements per step, starting from the total of the tiles before it.
template <class S>
__global__ void scan_lines_kernel(S s, const typename S::In* in, typename S::T* out, ScanPlan p,
                                  const typename S::Acc* totals) {
  using Acc = typename S::Acc;
  const WarpTile t = warp_tile(p);
  if (!t.live) return;  // whole warps leave together
  const int lane = threadIdx.x;
  int64_t off[2];
  p.lines.offsets(t.line, off);
  Acc carry = t.tile > 0 ? totals[t.line * p.tiles + t.tile - 1] : s.op.init();
  for (int64_t b = t.begin; b < t.end; b += 32) {
    const int64_t r = b + lane;
    Acc v = warp_scan(s.op, r < t.end ? s.op.value(in[off[0] + r * p.in_stride]) : s.op.init(), lane);
    v = s.op.combine(carry, v);
    if (r < t.end) out[off[1] + r * p.out_stride] = s.op.result(v);
    carry = warp::from_lane(v, 31);
  }
}

// The op with its storage types, as the kernels take it.
template <class Tp, bool IsProd>
struct Scanner {
  using T = Tp;
  using In = Tp;
  using Op = reduce::ScanOp<Tp, IsProd>;
  using Acc = typename Op::Acc;
  Op op;
};

template <class S>
void run_scan(const ScanPlan& p, const LoomTensorDesc& in, const LoomTensorDesc& out, int index, cudaStream_t st,
              const char* name) {
  using Acc = typename S::Acc;
  const S s{};
  const auto* x = plugin::data_ptr<const typename S::In>(in);
  auto* y = plugin::data_ptr<typename S::T>(out);
  const int64_t work = p.num_lines * p.tiles;  // threads (columns) or warps
  const unsigned grid = static_cast<unsigned>(p.columns ? (work + 255) / 256 : (work + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const dim3 warps(32, kWarpsPerBlock);
  Acc* totals = nullptr;
  gpu::CachingAllocator* a = nullptr;
  if (p.tiles > 1) {
    a = &allocator(index);
    totals = static_cast<Acc*>(a->allocate(static_cast<size_t>(work) * sizeof(Acc), st));
    if (p.columns) column_totals_kernel<S><<<grid, 256, 0, st>>>(s, x, p, totals);
    else tile_totals_kernel<S><<<grid, warps, 0, st>>>(s, x, p, totals);
    const unsigned line_grid = static_cast<unsigned>((p.num_lines + kWarpsPerBlock - 1) / kWarpsPerBlock);
    scan_totals_kernel<S><<<line_grid, warps, 0, st>>>(s, p, totals);
  }
  if (p.columns) scan_columns_kernel<S><<<grid, 256, 0, st>>>(s, x, y, p, totals);
  else scan_lines_kernel<S><<<grid, warps, 0, st>>>(s, x, y, p, totals);
  if (a) a->free(totals);  // reused on this stream only, after the kernels queued here
  check_launch(name);
}

template <bool IsProd>
void scan(const LoomKernelCall& c, const char* name) {
  if (c.num_inputs != 1 || c.num_outputs != 1 || c.num_values < 1)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": expected (self, dim) and one output");
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  bool same = in.ndim == out.ndim && in.dtype == out.dtype && in.ndim >= 0 && in.ndim <= plugin::kMaxIterDims;
  for (int32_t d = 0; same && d < in.ndim; ++d) same = in.shape[d] == out.shape[d];
  if (!same)
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT,
                  std::string(LOOM_GPU_NAME " ") + name + ": the output must have the input's shape and dtype (" +
                      plugin::dtype_name(in.dtype) + ", " + std::to_string(in.ndim) + " dims), got " +
                      plugin::dtype_name(out.dtype) + " with " + std::to_string(out.ndim) + " dims");
  const LoomValue& v = c.values[0];
  int64_t dim = -1;
  if (v.kind == LOOM_VALUE_INT) dim = v.u.i;
  else if (v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size == 1) dim = v.u.ints.data[0];
  if (dim < 0 || dim >= (in.ndim > 0 ? in.ndim : 1))  // a 0-d input scans as one element
    throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + name + ": bad scan dim " + std::to_string(dim) +
                                                    " (value kind " + std::to_string(v.kind) + ") for " +
                                                    std::to_string(in.ndim) + " dims");
  const int index = in.device.index;
  use_device(index);
  ScanPlan p;
  if (!plan_scan(in.ndim, in.shape, in.strides, out.strides, static_cast<int32_t>(dim), multiprocessor_count(index), p))
    throw Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + name + ": more than " +
                                               std::to_string(kMaxWalkDims) + " dims that do not merge");
  if (p.num_lines == 0 || p.len == 0) return;
  visit<DTypes::All>(in.dtype, name, [&](auto tag) {
    run_scan<Scanner<decltype(tag), IsProd>>(p, in, out, index, static_cast<cudaStream_t>(c.stream), name);
  });
}

}  // namespace

void cumsum(const LoomKernelCall& c) { scan<false>(c, "cumsum"); }
void cumprod(const LoomKernelCall& c) { scan<true>(c, "cumprod"); }

}  // namespace loom::LOOM_GPU_NAMESPACE
