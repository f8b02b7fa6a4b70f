// Host-side planning of CUDA reductions and scans (docs/kernel_conventions.md,
// "Reductions"). Plain C++ (also built by g++ and by the host-only test), so
// every decision about dims, strides and launch shapes is testable without a
// GPU; reduce_kernels.cuh only executes a plan.
//
// A reduction over any strides and any set of reduced dims becomes
//   outputs  x  reduced
// two row-major index spaces, each walked through its own (merged) dims:
// `kept` maps an output index to {input, output 0, output 1} element
// offsets, `red` maps a reduced index to an input offset. Size-1 dims are
// dropped, dims are ordered by input stride (largest first, broadcast
// outermost) and neighbours of one kind that are contiguous in every operand
// merge, so a contiguous tensor reduced over trailing or leading dims is one
// kept and one reduced dim. Ordering is stable, so a single reduced dim keeps
// its element order: the index ops (argmax, max.dim) read reduced indices as
// positions along that dim.
#pragma once

#include "vendor/gpu_target.hpp"

#include <loom/plugin_api.h>

#include <cstddef>
#include <cstdint>

namespace loom::LOOM_GPU_NAMESPACE {

// Dims a walk addresses after merging; more is declined (UNSUPPORTED, the
// core falls back), as geometry.cuh does for elementwise kernels.
inline constexpr int kMaxWalkDims = 12;

// A row-major index space over `shape`, with N operands' strides. Passed to
// kernels by value.
template <int N>
struct DimWalk {
  int32_t ndim = 0;  // 0: a single element (every offset 0)
  int64_t shape[kMaxWalkDims] = {};
  int64_t strides[N][kMaxWalkDims] = {};

  // Element offsets of every operand for linear index i (i < numel).
  LOOM_HD void offsets(int64_t i, int64_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = ndim == 1 ? 0 : i / shape[d], r = i - q * shape[d];
      for (int k = 0; k < N; ++k) off[k] += r * strides[k][d];
      i = q;
    }
  }
  // Offset of operand 0 only (the reduced walk has one operand).
  LOOM_HD int64_t offset0(int64_t i) const {
    if (ndim == 1) return i * strides[0][0];
    int64_t off = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / shape[d];
      off += (i - q * shape[d]) * strides[0][d];
      i = q;
    }
    return off;
  }
};

// Visits indices r, r + step, r + 2 * step, ... of a walk of one operand
// (ndim >= 1) and tracks their offsets with a division only when a step
// leaves the innermost dim's run, not one per dim and element as offset0.
struct WalkCursor {
  const DimWalk<1>* walk;
  int64_t row;   // index of the innermost run (r / inner size)
  int64_t pos;   // position within it
  int64_t base;  // offset of the run's first element

  LOOM_HD WalkCursor(const DimWalk<1>& w, int64_t r) : walk(&w) {
    const int64_t n = w.shape[w.ndim - 1];
    row = r / n;
    pos = r - row * n;
    base = w.offset0(row * n);
  }
  LOOM_HD int64_t offset() const { return base + pos * walk->strides[0][walk->ndim - 1]; }
  LOOM_HD void advance(int64_t step) {
    const int64_t n = walk->shape[walk->ndim - 1];
    pos += step;
    if (pos < n) return;
    row += pos / n;
    pos %= n;
    base = walk->offset0(row * n);
  }
};

struct ReducePlan {
  DimWalk<3> kept;  // operands {input, output 0, output 1}
  DimWalk<1> red;   // operand {input}
  int64_t num_outputs = 0;
  int64_t num_reduced = 0;
  // The reduced dims hold the input's smallest stride: lanes of a warp walk
  // a slice together. Otherwise adjacent threads take adjacent outputs and
  // each walks its slice (the kept innermost dim is what memory is read along).
  bool inner_reduced = false;
};

// The plan of reducing `in` over `reduced` into outputs with strides o0, o1
// (each in.ndim entries; pass o0 twice for one output). False when a side
// needs more than kMaxWalkDims dims.
bool plan_reduction(int32_t ndim, const int64_t* shape, const int64_t* in_strides,
                    const bool* reduced, const int64_t* o0_strides, const int64_t* o1_strides,
                    ReducePlan& plan);

// Checks a reduction call (one input; outputs of out_dtypes in keepdim form;
// at least `num_values` values, values[0] the dims) and plans it. Throws
// INVALID_ARGUMENT on a malformed call, UNSUPPORTED beyond kMaxWalkDims.
ReducePlan prepare_reduction(const LoomKernelCall& c, const char* op, int32_t num_values,
                             const int32_t* out_dtypes, int32_t num_outputs);

// How a plan runs. Blocks are block_x * block_y threads; gridDim = (grid_x,
// splits). Inner layout: threadIdx.y picks the output (block_y per block),
// the block_x lanes share its slice. Outer layout: threadIdx.x picks the
// output (block_x per block), the block_y lanes share its slice. With
// splits > 1 each output's slice is cut into `splits` pieces of split_len
// reduced elements, one per blockIdx.y, whose partial results a second
// kernel combines in order (deterministic: no atomics).
struct ReduceLaunch {
  bool inner = false;
  int block_x = 1, block_y = 1;
  int64_t grid_x = 1;
  int64_t splits = 1;
  int64_t split_len = 0;  // a multiple of vec
  int vec = 1;            // elements per vector load (inner layout only)
};

inline constexpr int kReduceThreads = 256;  // threads per block
inline constexpr int64_t kMaxSplits = 65535;  // gridDim.y

// `vec` is what the input allows (vector_width); `resident_blocks` how many
// blocks of the kernel the device runs at once (multiprocessors times
// blocks per multiprocessor): the launch aims to fill them.
ReduceLaunch choose_launch(const ReducePlan& plan, int vec, int64_t resident_blocks);

// Elements per 16-byte load when every slice of an inner plan starts
// 16-byte aligned and is contiguous (one reduced dim, stride 1); else 1.
int vector_width(const ReducePlan& plan, const void* input, size_t itemsize);

// ------------------------------------------------------------------ scans ---

// An inclusive scan along `dim`: `lines` maps a line index to {input,
// output} offsets of its first element; the line's elements are `len`
// apart by strides in_stride / out_stride.
struct ScanPlan {
  DimWalk<2> lines;
  int64_t num_lines = 0;
  int64_t len = 0;
  int64_t in_stride = 0, out_stride = 0;
  // One thread per line (per tile of a line), walking down the scan dim:
  // adjacent lines are adjacent in memory, so each step reads a coalesced
  // row. Otherwise a warp scans a line (a tile of one).
  bool columns = false;
  // Tiles per line: with too few lines to fill the device, each line is
  // cut into tiles scanned in parallel (three passes: tile totals, their
  // scan per line, the tiles from the total before them).
  int64_t tiles = 1;
  int64_t tile_len = 0;  // elements per tile (a multiple of 32 for warps)

  // Elements [begin, end) of a line that tile `tile` scans.
  LOOM_HD void tile_range(int64_t tile, int64_t& begin, int64_t& end) const {
    begin = tiles > 1 ? tile * tile_len : 0;
    end = tiles > 1 && begin + tile_len < len ? begin + tile_len : len;
  }
};

// False when the lines need more than kMaxWalkDims dims.
bool plan_scan(int32_t ndim, const int64_t* shape, const int64_t* in_strides,
               const int64_t* out_strides, int32_t dim, int sm_count, ScanPlan& plan);

}  // namespace loom::LOOM_GPU_NAMESPACE
