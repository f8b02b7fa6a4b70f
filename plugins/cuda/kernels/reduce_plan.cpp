// Planning of CUDA reductions and scans; see reduce_plan.hpp.
#include "reduce_plan.hpp"
#include "vendor/gpu_target.hpp"

#include <loom/plugin.hpp>
#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <climits>
#include <loom/plugin/reduce_dims.hpp>

#include <string>

namespace loom::LOOM_GPU_NAMESPACE {
namespace {

using plugin::Failure;

[[noreturn]] void invalid(const char* op, const std::string& what) {
  throw Failure(LOOM_STATUS_INVALID_ARGUMENT, std::string(LOOM_GPU_NAME " ") + op + ": " + what);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t pow2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

struct Dim {
  int64_t size, in, o0, o1;
  bool red;
};

// Stride 0 (broadcast) counts as the largest, so it ends up outermost and
// never becomes the dim lanes walk.
int64_t order_key(const Dim& d) { return d.in == 0 ? INT64_MAX : d.in; }

}  // namespace

bool plan_reduction(int32_t ndim, const int64_t* shape, const int64_t* in_strides,
                    const bool* reduced, const int64_t* o0_strides, const int64_t* o1_strides,
                    ReducePlan& plan) {
  plan = ReducePlan{};
  Dim dims[plugin::kMaxIterDims];
  int n = 0;
  bool empty_red = false, empty_out = false;
  for (int32_t d = 0; d < ndim; ++d) {
    const int64_t size = shape[d];
    if (size == 1) continue;
    if (size == 0) {
      (reduced[d] ? empty_red : empty_out) = true;
      continue;
    }
    const bool r = reduced[d];
    const Dim cur{size, in_strides[d], r ? 0 : o0_strides[d], r ? 0 : o1_strides[d], r};
    int k = n++;  // stable insertion sort, largest input stride first
    for (; k > 0 && order_key(dims[k - 1]) < order_key(cur); --k) dims[k] = dims[k - 1];
    dims[k] = cur;
  }
  int m = 0;  // merge neighbours of one kind contiguous in every operand
  for (int i = 0; i < n; ++i) {
    const Dim& c = dims[i];
    if (m > 0) {
      Dim& p = dims[m - 1];
      if (p.red == c.red && p.in == c.in * c.size && p.o0 == c.o0 * c.size && p.o1 == c.o1 * c.size) {
        p = {p.size * c.size, c.in, c.o0, c.o1, c.red};
        continue;
      }
    }
    dims[m++] = c;
  }
  plan.num_outputs = empty_out ? 0 : 1;
  plan.num_reduced = empty_red ? 0 : 1;
  for (int i = 0; i < m; ++i) {
    const Dim& d = dims[i];
    if (d.red) {
      if (plan.red.ndim == kMaxWalkDims) return false;
      plan.red.shape[plan.red.ndim] = d.size;
      plan.red.strides[0][plan.red.ndim++] = d.in;
      plan.num_reduced *= d.size;
    } else {
      if (plan.kept.ndim == kMaxWalkDims) return false;
      const int k = plan.kept.ndim++;
      plan.kept.shape[k] = d.size;
      plan.kept.strides[0][k] = d.in;
      plan.kept.strides[1][k] = d.o0;
      plan.kept.strides[2][k] = d.o1;
      plan.num_outputs *= d.size;
    }
  }
  plan.inner_reduced = m > 0 && dims[m - 1].red && plan.num_reduced > 0;
  return true;
}

ReducePlan prepare_reduction(const LoomKernelCall& c, const char* op, int32_t num_values,
                             const int32_t* out_dtypes, int32_t num_outputs) {
  if (c.num_inputs != 1 || c.num_outputs != num_outputs)
    invalid(op, "expected 1 input and " + std::to_string(num_outputs) + " outputs, got " +
                    std::to_string(c.num_inputs) + " and " + std::to_string(c.num_outputs));
  if (c.num_values < num_values)
    invalid(op, "expected " + std::to_string(num_values) + " values, got " + std::to_string(c.num_values));
  const LoomTensorDesc& in = c.inputs[0];
  if (in.ndim < 0 || in.ndim > plugin::kMaxIterDims) invalid(op, "bad input ndim " + std::to_string(in.ndim));
  bool reduced[plugin::kMaxIterDims];
  plugin::read_reduced_dims(c.values[0], in.ndim, LOOM_GPU_NAME, op, reduced);
  for (int32_t k = 0; k < num_outputs; ++k) plugin::expect_keepdim(in, reduced, c.outputs[k], out_dtypes[k], LOOM_GPU_NAME, op);
  ReducePlan plan;
  if (!plan_reduction(in.ndim, in.shape, in.strides, reduced, c.outputs[0].strides,
                      c.outputs[num_outputs - 1].strides, plan))
    throw Failure(LOOM_STATUS_UNSUPPORTED,
                  std::string(LOOM_GPU_NAME " ") + op + ": more than " + std::to_string(kMaxWalkDims) +
                      " kept or reduced dims that do not merge");
  return plan;
}

int vector_width(const ReducePlan& plan, const void* input, size_t itemsize) {
  if (!plan.inner_reduced || plan.red.ndim != 1 || plan.red.strides[0][0] != 1 || itemsize == 0 ||
      itemsize > 8)
    return 1;
  if (reinterpret_cast<uintptr_t>(input) % 16 != 0) return 1;
  for (int d = 0; d < plan.kept.ndim; ++d)
    if ((plan.kept.strides[0][d] * static_cast<int64_t>(itemsize)) % 16 != 0) return 1;
  return static_cast<int>(16 / itemsize);
}

ReduceLaunch choose_launch(const ReducePlan& plan, int vec, int64_t resident_blocks) {
  ReduceLaunch L;
  L.inner = plan.inner_reduced;
  L.vec = L.inner ? std::max(vec, 1) : 1;
  const int64_t n_out = std::max<int64_t>(plan.num_outputs, 1);
  const int64_t n_red = plan.num_reduced;
  resident_blocks = std::max<int64_t>(resident_blocks, 1);
  const int64_t target = resident_blocks * kReduceThreads;  // threads the device runs at once
  constexpr int64_t kMinPerLane = 16;  // loads per lane below which more lanes do not pay
  const int64_t units = ceil_div(n_red, L.vec);  // loads per slice
  int64_t lanes;                                 // threads sharing one slice
  if (L.inner) {
    lanes = std::min<int64_t>(32, pow2_at_least(std::max<int64_t>(units, 1)));
    // Long slices and too few outputs to fill the device with warps: a
    // whole block per slice.
    if (units > 32 * kMinPerLane && n_out * 32 < target) lanes = kReduceThreads;
    L.block_x = static_cast<int>(lanes);
    L.block_y = kReduceThreads / L.block_x;
    L.grid_x = ceil_div(n_out, L.block_y);
  } else {
    // 32 adjacent outputs per warp (one 128-byte row of float32); fewer
    // when there are fewer outputs, the rest of the block shares slices.
    L.block_x = static_cast<int>(std::min<int64_t>(32, pow2_at_least(n_out)));
    L.block_y = kReduceThreads / L.block_x;
    lanes = L.block_y;
    L.grid_x = ceil_div(n_out, L.block_x);
  }
  // Fewer blocks than the device holds at once: split the slices so the
  // grid is at most one full wave (rounding down: a second, almost empty
  // wave would cost a whole slice's time).
  if (L.grid_x < resident_blocks && units > lanes * kMinPerLane)
    L.splits = std::min({resident_blocks / L.grid_x, ceil_div(units, lanes * kMinPerLane), kMaxSplits});
  L.split_len = ceil_div(ceil_div(std::max<int64_t>(n_red, 1), L.splits), L.vec) * L.vec;
  L.splits = std::max<int64_t>(1, ceil_div(n_red, L.split_len));  // no empty split
  return L;
}

bool plan_scan(int32_t ndim, const int64_t* shape, const int64_t* in_strides,
               const int64_t* out_strides, int32_t dim, int sm_count, ScanPlan& plan) {
  plan = ScanPlan{};
  int64_t sh[plugin::kMaxIterDims], si[plugin::kMaxIterDims], so[plugin::kMaxIterDims];
  int32_t nk = 0;
  for (int32_t d = 0; d < ndim; ++d) {
    if (d == dim) continue;
    sh[nk] = shape[d];
    si[nk] = in_strides[d];
    so[nk++] = out_strides[d];
  }
  plan.len = ndim > 0 ? shape[dim] : 1;
  plan.in_stride = ndim > 0 ? in_strides[dim] : 0;
  plan.out_stride = ndim > 0 ? out_strides[dim] : 0;
  const int64_t* strides[2] = {si, so};
  plugin::StridedIter<2> it;
  plan.num_lines = it.init(nk, sh, strides);
  if (it.ndim > kMaxWalkDims) return false;
  plan.lines.ndim = it.ndim;
  for (int d = 0; d < it.ndim; ++d) {
    plan.lines.shape[d] = it.shape[d];
    plan.lines.strides[0][d] = it.strides[0][d];
    plan.lines.strides[1][d] = it.strides[1][d];
  }
  if (plan.num_lines == 0 || plan.len == 0) return true;
  const int64_t target = int64_t{std::max(sm_count, 1)} * 2048;  // resident threads
  // Lines side by side in memory while the scan dim is not: a thread per
  // line reads coalesced rows (a warp per line would read 32 scattered ones).
  const bool lines_contiguous = it.ndim >= 1 && it.strides[0][it.ndim - 1] == 1 && it.strides[1][it.ndim - 1] == 1;
  plan.columns = lines_contiguous && plan.in_stride != 1 && plan.num_lines >= 32 && plan.len > 1;
  if (plan.columns) {
    constexpr int64_t kMinTile = 64;  // sequential steps per thread below which tiling costs more than it gives
    plan.tile_len = plan.len;
    if (plan.num_lines < target && plan.len > 2 * kMinTile) {
      plan.tile_len = std::max(kMinTile, ceil_div(plan.len, ceil_div(target, plan.num_lines)));
      plan.tiles = ceil_div(plan.len, plan.tile_len);
    }
    return true;
  }
  constexpr int64_t kTile = 4096;  // elements per warp tile
  plan.tile_len = kTile;
  if (plan.len > 2 * kTile && plan.num_lines * 32 < target) plan.tiles = ceil_div(plan.len, kTile);
  return true;
}

}  // namespace loom::LOOM_GPU_NAMESPACE
