// Gather- and scatter-style indexing on CUDA, matching the CPU plugin
// (plugins/cpu/indexing_kernels.cpp; contracts in docs/kernel_conventions.md,
// "Indexing"): gather and index_select (one kernel: the core hands
// index_select's index over as a view of the output's shape), scatter_.src,
// scatter_add_ and index_add_ (one driver: index_add_'s index arrives as a
// view of source's shape).
//
// gather writes every output element independently: one thread each.
// The scatters may hit one self element from many index positions, but only
// positions that agree off `dim` can collide; so threads take the kept
// (non-`dim`) positions and walk `dim` sequentially, which needs no atomics,
// is deterministic and keeps the CPU's "last write wins in index order".
// When the kept positions are too few to fill the GPU (index_add_ of many
// rows into a short self), floating adds switch to one thread per index
// element with atomics: faster, but the order of the float additions, so
// the rounding, varies from run to run (docs/cuda.md).
//
// Copies move raw words of the dtype's width (one kernel per width, not per
// dtype); out-of-range indices are skipped and the first one is reported
// after the launch (index_check.cuh).
#include "elementwise_args.hpp"
#include "geometry.cuh"
#include "index_check.cuh"
#include "index_shape.hpp"
#include "indexing_ops.cuh"
#include "vendor/gpu_target.hpp"

#include <algorithm>
#include <cstring>

namespace loom::LOOM_GPU_NAMESPACE::indexing {
namespace {

int32_t dim_value(const LoomKernelCall& c, const char* op, const LoomTensorDesc& self) {
  const int64_t dim = ew::value_at(c, op, 0).u.i;
  if (dim < 0 || dim >= self.ndim) [[unlikely]]
    fail_op(op, "dim " + std::to_string(dim) + " out of range for " + std::to_string(self.ndim) + "-d self");
  return static_cast<int32_t>(dim);
}

// ---- gather / index_select --------------------------------------------------------------

// Operands of g: 0 self (stride 0 along dim), 1 index, 2 out.
template <class W, class I>
__global__ void gather_kernel(W* out, const W* self, const I* index, Geometry<3> g, int64_t size, int64_t sdim,
                              BadIndexSlot* bad) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    const int64_t j = static_cast<int64_t>(index[off[1]]);
    if (!in_bounds(j, size)) [[unlikely]] {
      record_bad_index(bad, j);
      continue;
    }
    out[off[2]] = self[off[0] + j * sdim];
  }
}

// inputs: self, index (the output's shape); values: dim.
template <const char* Op>
void gather(const LoomKernelCall& c) {
  ew::expect_arity(c, Op, 2, 1);
  const LoomTensorDesc& self = c.inputs[0];
  const LoomTensorDesc& index = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  const int32_t dim = dim_value(c, Op, self);
  ew::expect_like(index, out, Op, false);
  if (self.ndim != out.ndim || self.dtype != out.dtype) [[unlikely]]
    fail_op(Op, "self and output differ in ndim or dtype");
  int64_t sstr[kMaxKernelDims + 1];
  if (self.ndim > kMaxKernelDims) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + Op + ": more than 12 dims");
  std::copy(self.strides, self.strides + self.ndim, sstr);
  sstr[dim] = 0;  // the index supplies the position along dim
  const int64_t* strides[3] = {sstr, index.strides, out.strides};
  Geometry<3> g;
  if (!make_geometry<3>(out.ndim, out.shape, strides, g))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + Op + ": more than 12 non-mergeable dims");
  if (g.numel == 0) return;
  const cudaStream_t s = ew::enter(c);
  const BadIndexCheck check_slot(out.device.index, s);
  visit_width(self.dtype, Op, [&](auto w) {
    using W = decltype(w);
    visit_index(index.dtype, Op, [&](auto i) {
      using I = decltype(i);
      gather_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(plugin::data_ptr<W>(out), plugin::data_ptr<const W>(self),
                                                         plugin::data_ptr<const I>(index), g, self.shape[dim],
                                                         self.strides[dim], check_slot.slot());
    });
  });
  check_slot.report(Op, dim, self.shape[dim]);
}

// ---- scatter_ / scatter_add_ / index_add_ -----------------------------------------------

template <class W>
struct Assign {
  __device__ W operator()(W, W v) const { return v; }
};

// Where the scatter walks: the kept dims' geometry (operands 0 self, 1 index,
// 2 src) and the strides and length along `dim`.
struct ScatterPlan {
  Geometry<3> kept;
  int64_t len, size, self_dim, index_dim, src_dim;
};

// One thread per kept position, `dim` walked in index order.
template <class T, class I, class Op>
__global__ void scatter_rows_kernel(T* self, const I* index, const T* src, ScatterPlan p, Op op, BadIndexSlot* bad) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < p.kept.numel;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    p.kept.offsets(i, off);
    for (int64_t j = 0; j < p.len; ++j) {
      const int64_t k = static_cast<int64_t>(index[off[1] + j * p.index_dim]);
      if (!in_bounds(k, p.size)) [[unlikely]] {
        record_bad_index(bad, k);
        continue;
      }
      T& dst = self[off[0] + k * p.self_dim];
      dst = op(dst, src[off[2] + j * p.src_dim]);
    }
  }
}

// dst = op(dst, v) atomically: a hardware add for float and double (the CPU's
// single rounding of dst + x), a compare-and-swap loop on the 16-bit word
// for float16/bfloat16 (so the sum is rounded once from float, as the CPU).
template <class T>
__device__ void atomic_add(T* dst, T v, const ScatterAdd<T>& op) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    atomicAdd(dst, op.scaled ? static_cast<T>(v * op.alpha) : v);
  } else {
    static_assert(sizeof(T) == 2, "atomic scatter_add_ covers the floating dtypes only");
    auto* word = reinterpret_cast<unsigned short*>(dst);
    unsigned short old = *word, assumed;
    do {
      assumed = old;
      T cur;
      memcpy(&cur, &assumed, sizeof cur);
      const T next = op(cur, v);
      unsigned short bits;
      memcpy(&bits, &next, sizeof bits);
      old = atomicCAS(word, assumed, bits);
    } while (old != assumed);
  }
}

// One thread per index element (operands of g: 0 self with stride 0 along
// dim, 1 index, 2 src).
template <class T, class I>
__global__ void scatter_atomic_kernel(T* self, const I* index, const T* src, Geometry<3> g, int64_t size,
                                      int64_t self_dim, ScatterAdd<T> op, BadIndexSlot* bad) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < g.numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t off[3];
    g.offsets(i, off);
    const int64_t k = static_cast<int64_t>(index[off[1]]);
    if (!in_bounds(k, size)) [[unlikely]] {
      record_bad_index(bad, k);
      continue;
    }
    atomic_add(self + off[0] + k * self_dim, src[off[2]], op);
  }
}

// Kept positions below which floating adds go atomic (a few waves of an
// H100's 132 SMs), and the `dim` length that makes it worth it.
constexpr int64_t kAtomicKeptBelow = 16384;
constexpr int64_t kAtomicLenFrom = 32;

ScatterPlan plan_scatter(const LoomTensorDesc& self, const LoomTensorDesc& index, const LoomTensorDesc& src,
                         int32_t dim, const char* op) {
  int64_t shape[kMaxKernelDims], s0[kMaxKernelDims], s1[kMaxKernelDims], s2[kMaxKernelDims];
  int32_t nk = 0;
  if (index.ndim > kMaxKernelDims + 1) [[unlikely]]
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 13 dims");
  for (int32_t d = 0; d < index.ndim; ++d) {
    if (d == dim) continue;
    shape[nk] = index.shape[d];
    s0[nk] = self.strides[d];
    s1[nk] = index.strides[d];
    s2[nk++] = src.strides[d];
  }
  const int64_t* strides[3] = {s0, s1, s2};
  ScatterPlan p{};
  if (!make_geometry<3>(nk, shape, strides, p.kept))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 non-mergeable dims");
  p.len = index.shape[dim];
  p.size = self.shape[dim];
  p.self_dim = self.strides[dim];
  p.index_dim = index.strides[dim];
  p.src_dim = src.strides[dim];
  return p;
}

// The whole index shape, self's stride along dim zeroed (the atomic path).
Geometry<3> full_geometry(const LoomTensorDesc& self, const LoomTensorDesc& index, const LoomTensorDesc& src,
                          int32_t dim, const char* op) {
  int64_t s0[kMaxKernelDims + 1];
  std::copy(self.strides, self.strides + self.ndim, s0);
  s0[dim] = 0;
  const int64_t* strides[3] = {s0, index.strides, src.strides};
  Geometry<3> g;
  if (!make_geometry<3>(index.ndim, index.shape, strides, g))
    throw plugin::Failure(LOOM_STATUS_UNSUPPORTED, std::string(LOOM_GPU_NAME " ") + op + ": more than 12 non-mergeable dims");
  return g;
}

// alpha (values[1], index_add_) in T's add type; 1 when absent.
template <class T>
ScatterAdd<T> add_op(const LoomKernelCall& c, const char* op) {
  using A = add_t<T>;
  if (c.num_values < 2) return {A(1), false};
  // Converted to self's dtype first (an integer self truncates a float
  // alpha), then widened: the CPU's widen(scalar_as<T>(alpha)).
  const A a = static_cast<A>(ew::scalar_arg<typename ew::HostOf<T>::type>(c, op, 1));
  return {a, !(a == A(1))};
}

enum class Combine { Assign, Add };

// inputs: self (= outputs[0]), index (the loop shape), src (read over the
// loop shape); values: dim[, alpha].
template <Combine C, const char* Op>
void scatter(const LoomKernelCall& c) {
  ew::expect_arity(c, Op, 3, 1);
  const LoomTensorDesc& self = c.outputs[0];
  const LoomTensorDesc& index = c.inputs[1];
  const LoomTensorDesc& src = c.inputs[2];
  const int32_t dim = dim_value(c, Op, self);
  if (index.ndim != self.ndim || src.ndim != self.ndim || src.dtype != self.dtype) [[unlikely]]
    fail_op(Op, "self, index and src differ in ndim or dtype");
  const ScatterPlan p = plan_scatter(self, index, src, dim, Op);
  if (p.kept.numel == 0 || p.len == 0) return;
  const cudaStream_t s = ew::enter(c);
  const BadIndexCheck check_slot(self.device.index, s);
  auto rows = [&](auto* dst, const auto* values, auto i, auto op) {
    using I = decltype(i);
    scatter_rows_kernel<<<grid_for(p.kept.numel), kBlock, 0, s>>>(dst, plugin::data_ptr<const I>(index), values, p,
                                                                   op, check_slot.slot());
  };
  visit_index(index.dtype, Op, [&](auto i) {
    using I = decltype(i);
    if constexpr (C == Combine::Assign) {
      visit_width(self.dtype, Op, [&](auto w) {
        using W = decltype(w);
        rows(plugin::data_ptr<W>(self), plugin::data_ptr<const W>(src), i, Assign<W>{});
      });
    } else {
      visit<DTypes::All>(self.dtype, Op, [&](auto t) {
        using T = decltype(t);
        const ScatterAdd<T> op = add_op<T>(c, Op);
        if constexpr (is_floating_v<T>) {
          if (p.kept.numel < kAtomicKeptBelow && p.len >= kAtomicLenFrom) {
            const Geometry<3> g = full_geometry(self, index, src, dim, Op);
            scatter_atomic_kernel<<<grid_for(g.numel), kBlock, 0, s>>>(
                plugin::data_ptr<T>(self), plugin::data_ptr<const I>(index), plugin::data_ptr<const T>(src), g,
                p.size, p.self_dim, op, check_slot.slot());
            return;
          }
        }
        rows(plugin::data_ptr<T>(self), plugin::data_ptr<const T>(src), i, op);
      });
    }
  });
  check_slot.report(Op, dim, self.shape[dim]);
}

constexpr char kGather[] = "gather";
constexpr char kIndexSelect[] = "index_select";
constexpr char kScatter[] = "scatter_";
constexpr char kScatterAdd[] = "scatter_add_";
constexpr char kIndexAdd[] = "index_add_";

}  // namespace

void register_indexing_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("gather", LOOM_GPU_NAME, kernel<gather<kGather>>, kAllMask);
  r.kernel("index_select", LOOM_GPU_NAME, kernel<gather<kIndexSelect>>, kAllMask);
  r.kernel("scatter_.src", LOOM_GPU_NAME, kernel<scatter<Combine::Assign, kScatter>>, kAllMask);
  r.kernel("scatter_add_", LOOM_GPU_NAME, kernel<scatter<Combine::Add, kScatterAdd>>, kAllMask);
  r.kernel("index_add_", LOOM_GPU_NAME, kernel<scatter<Combine::Add, kIndexAdd>>, kAllMask);
}

}  // namespace loom::LOOM_GPU_NAMESPACE::indexing
