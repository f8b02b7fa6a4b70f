// sum over a set of dims, output in keepdim form.
//
// The input's dims are simplified (size-1 dims dropped, neighbours of the
// same kind merged) and split into kept dims K and reduced dims R. Then:
//   * innermost dim reduced ("inner"): each output element sums its slice;
//     a contiguous run is summed in float blocks of kBlock elements with 16
//     lanes (vectorises; error bounded by the block) added into double;
//   * innermost dim kept ("outer", e.g. summing rows): columns are summed
//     in blocks of kColumns accumulators, one vector add per input row.
// Slices are cut into fixed chunks of kChunk elements whose partial sums are
// added in chunk order, so a result never depends on the thread count.
// Floating dtypes accumulate in double, integers and bool in wrapping
// uint64 (int64 semantics); the result is converted with plugin::cast rules.
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

constexpr int64_t kBlock = 1024;    // floats summed per float block
constexpr int64_t kChunk = 65536;   // elements per deterministic partial sum
constexpr int64_t kColumns = 256;   // accumulators per "outer" work item

template <class T>
using acc_t = std::conditional_t<plugin::is_floating_v<T>, double, uint64_t>;

template <class T>
acc_t<T> to_acc(T v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else if constexpr (plugin::is_floating_v<T>) return static_cast<float>(v);
  else return static_cast<uint64_t>(v);  // modular; bool -> 0/1
}

template <class T>
T from_acc(acc_t<T> a) {
  if constexpr (plugin::is_floating_v<T>) return plugin::cast<T>(a);
  else if constexpr (std::is_same_v<T, bool>) return a != 0;
  else return static_cast<T>(a);  // modular
}

// Sum of n contiguous elements.
template <class T>
LOOM_CPU_CLONES acc_t<T> sum_contiguous(const T* p, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    double lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int l = 0; l < 8; ++l) lanes[l] += p[i + l];
    double s = 0;
    for (; i < n; ++i) s += p[i];
    for (int l = 0; l < 8; ++l) s += lanes[l];
    return s;
  } else if constexpr (plugin::is_floating_v<T>) {
    double total = 0;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t e = std::min(n, b + kBlock);
      float lanes[16] = {};
      int64_t i = b;
      for (; i + 16 <= e; i += 16)
        for (int l = 0; l < 16; ++l) lanes[l] += static_cast<float>(p[i + l]);
      float s = 0;
      for (; i < e; ++i) s += static_cast<float>(p[i]);
      for (int l = 0; l < 16; ++l) s += lanes[l];
      total += s;
    }
    return total;
  } else {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; ++i) s += static_cast<uint64_t>(p[i]);
    return s;
  }
}

template <class T>
acc_t<T> sum_run(const T* p, int64_t stride, int64_t n) {
  if (stride == 1) return sum_contiguous(p, n);
  acc_t<T> s = 0;
  for (int64_t i = 0; i < n; ++i) s += to_acc(p[i * stride]);
  return s;
}

// One simplified dim.
struct Dim {
  int64_t size, in_stride, out_stride;
  bool reduced;
};

// The simplified problem. kept/red iterate K and R: kept has operands
// {input, output}, red has {input}.
struct Plan {
  plugin::StridedIter<2> kept;
  plugin::StridedIter<1> red;
  int64_t numel_out = 1, numel_red = 1;
  bool inner_reduced = false;
};

void make_plan(const LoomTensorDesc& in, const LoomTensorDesc& out, const bool* reduced,
               Plan& plan) {
  Dim dims[plugin::kMaxIterDims];
  int n = 0;
  for (int32_t d = 0; d < in.ndim; ++d) {
    if (in.shape[d] == 1) continue;
    const Dim cur{in.shape[d], in.strides[d], reduced[d] ? 0 : out.strides[d], reduced[d]};
    if (n > 0) {
      Dim& prev = dims[n - 1];
      if (prev.reduced == cur.reduced && prev.in_stride == cur.in_stride * cur.size &&
          prev.out_stride == cur.out_stride * cur.size) {
        prev.size *= cur.size;
        prev.in_stride = cur.in_stride;
        prev.out_stride = cur.out_stride;
        continue;
      }
    }
    dims[n++] = cur;
  }
  int64_t k_shape[plugin::kMaxIterDims], k_in[plugin::kMaxIterDims], k_out[plugin::kMaxIterDims];
  int64_t r_shape[plugin::kMaxIterDims], r_in[plugin::kMaxIterDims];
  int nk = 0, nr = 0;
  for (int i = 0; i < n; ++i) {
    if (dims[i].reduced) {
      r_shape[nr] = dims[i].size;
      r_in[nr++] = dims[i].in_stride;
    } else {
      k_shape[nk] = dims[i].size;
      k_in[nk] = dims[i].in_stride;
      k_out[nk++] = dims[i].out_stride;
    }
  }
  const int64_t* ks[2] = {k_in, k_out};
  const int64_t* rs[1] = {r_in};
  plan.numel_out = plan.kept.init(nk, k_shape, ks);
  plan.numel_red = plan.red.init(nr, r_shape, rs);
  plan.inner_reduced = n > 0 && dims[n - 1].reduced;
}

// Sum of the slice at `p` over linear R indices [begin, end).
template <class T>
acc_t<T> sum_slice(const Plan& plan, const T* p, int64_t begin, int64_t end) {
  acc_t<T> s = 0;
  const int64_t stride = plan.red.inner_stride(0);
  plan.red.for_each_run(begin, end, [&](const int64_t* off, int64_t len) {
    s += sum_run(p + off[0], stride, len);
  });
  return s;
}

// Sum of a whole slice, chunk by chunk in a fixed order.
template <class T>
acc_t<T> sum_slice_chunked(const Plan& plan, const T* p) {
  acc_t<T> s = 0;
  for (int64_t b = 0; b < plan.numel_red; b += kChunk)
    s += sum_slice(plan, p, b, std::min(plan.numel_red, b + kChunk));
  return s;
}

// Element offsets (input, output) of kept linear index i.
void kept_offsets(const Plan& plan, int64_t i, int64_t& in_off, int64_t& out_off) {
  plan.kept.for_each_run(i, i + 1, [&](const int64_t* off, int64_t) {
    in_off = off[0];
    out_off = off[1];
  });
}

template <class T>
void sum_inner(const Plan& plan, const T* pin, T* pout) {
  const int64_t nchunks = (plan.numel_red + kChunk - 1) / kChunk;
  if (nchunks > 1 && plan.numel_out < omp_get_max_threads()) {
    // Few long slices: sum (slice, chunk) pairs in parallel, then in order.
    std::vector<acc_t<T>> partial(static_cast<size_t>(plan.numel_out * nchunks));
    parallel_for(plan.numel_out * nchunks, 1, [&](int64_t s, int64_t e) {
      for (int64_t w = s; w < e; ++w) {
        int64_t in_off = 0, out_off = 0;
        kept_offsets(plan, w / nchunks, in_off, out_off);
        const int64_t b = (w % nchunks) * kChunk;
        partial[static_cast<size_t>(w)] =
            sum_slice(plan, pin + in_off, b, std::min(plan.numel_red, b + kChunk));
      }
    });
    for (int64_t o = 0; o < plan.numel_out; ++o) {
      acc_t<T> s = 0;
      for (int64_t c = 0; c < nchunks; ++c) s += partial[static_cast<size_t>(o * nchunks + c)];
      int64_t in_off = 0, out_off = 0;
      kept_offsets(plan, o, in_off, out_off);
      pout[out_off] = from_acc<T>(s);
    }
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / plan.numel_red);
  parallel_for(plan.numel_out, grain, [&](int64_t s, int64_t e) {
    const int64_t sin = plan.kept.inner_stride(0), sout = plan.kept.inner_stride(1);
    plan.kept.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      for (int64_t i = 0; i < len; ++i)
        pout[off[1] + i * sout] = from_acc<T>(sum_slice_chunked(plan, pin + off[0] + i * sin));
    });
  });
}

template <class T>
void sum_outer(const Plan& plan, const T* pin, T* pout) {
  const int64_t cols = plan.kept.inner_size();
  const int64_t sin = plan.kept.inner_stride(0), sout = plan.kept.inner_stride(1);
  const int64_t col_blocks = (cols + kColumns - 1) / kColumns;
  const int64_t items = plan.numel_out / cols * col_blocks;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (plan.numel_red * kColumns));
  const int64_t rstride = plan.red.inner_stride(0);
  parallel_for(items, grain, [&](int64_t s, int64_t e) {
    acc_t<T> acc[kColumns];
    for (int64_t w = s; w < e; ++w) {
      const int64_t c0 = (w % col_blocks) * kColumns;
      const int64_t nc = std::min(kColumns, cols - c0);
      int64_t in_off = 0, out_off = 0;
      kept_offsets(plan, w / col_blocks * cols + c0, in_off, out_off);
      for (int64_t j = 0; j < nc; ++j) acc[j] = 0;
      const T* base = pin + in_off;
      plan.red.for_each_run(0, plan.numel_red, [&](const int64_t* off, int64_t len) {
        for (int64_t r = 0; r < len; ++r) {
          const T* row = base + off[0] + r * rstride;
          if (sin == 1) {
            for (int64_t j = 0; j < nc; ++j) acc[j] += to_acc(row[j]);
          } else {
            for (int64_t j = 0; j < nc; ++j) acc[j] += to_acc(row[j * sin]);
          }
        }
      });
      for (int64_t j = 0; j < nc; ++j) pout[out_off + j * sout] = from_acc<T>(acc[j]);
    }
  });
}

template <class T>
void sum_typed(const LoomTensorDesc& in, const LoomTensorDesc& out, const bool* reduced) {
  if (plugin::numel(in) == 0) {  // an empty reduction is 0
    apply_unary<T, T>(out, out, [](T) { return T(0); });
    return;
  }
  Plan plan;
  make_plan(in, out, reduced, plan);
  const T* pin = plugin::data_ptr<const T>(in);
  T* pout = plugin::data_ptr<T>(out);
  if (plan.numel_red == 1) {  // nothing with size > 1 is reduced: a copy
    apply_unary<T, T>(out, in, [](T v) { return from_acc<T>(to_acc(v)); });
    return;
  }
  if (plan.inner_reduced) sum_inner(plan, pin, pout);
  else sum_outer(plan, pin, pout);
}

}  // namespace

void sum(const LoomKernelCall& c) {
  expect_arity(c, "sum", 1, 1);
  expect_values(c, "sum", 1);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  const LoomValue& dims = c.values[0];
  if (in.dtype < 0 || in.dtype >= LOOM_DTYPE_COUNT) fail_dtype("sum", in.dtype);
  if (in.dtype != out.dtype || in.ndim != out.ndim || in.ndim > plugin::kMaxIterDims)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu sum: input and output must share dtype and ndim (keepdim form), got %s/%d and %s/%d",
         plugin::dtype_name(in.dtype), in.ndim, plugin::dtype_name(out.dtype), out.ndim);
  bool reduced[plugin::kMaxIterDims];
  const bool all = dims.kind == LOOM_VALUE_NONE ||
                   (dims.kind == LOOM_VALUE_INT_LIST && dims.u.ints.size == 0);
  if (!all && dims.kind != LOOM_VALUE_INT_LIST)
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu sum: dim must be an int list (value kind %d)",
         dims.kind);
  for (int32_t d = 0; d < in.ndim; ++d) reduced[d] = all;
  if (!all) {
    for (int64_t i = 0; i < dims.u.ints.size; ++i) {
      const int64_t d = dims.u.ints.data[i];
      if (d < 0 || d >= in.ndim)
        fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu sum: dim %lld out of range for %d dims",
             static_cast<long long>(d), in.ndim);
      reduced[d] = true;
    }
  }
  for (int32_t d = 0; d < in.ndim; ++d) {
    if (out.shape[d] != (reduced[d] ? 1 : in.shape[d]))
      fail(LOOM_STATUS_INVALID_ARGUMENT,
           "cpu sum: output dim %d has size %lld, expected %lld (keepdim form)", d,
           static_cast<long long>(out.shape[d]),
           static_cast<long long>(reduced[d] ? 1 : in.shape[d]));
  }
  dispatch<DTypes::All>(in.dtype, "sum", [&](auto tag) {
    using T = decltype(tag);
    sum_typed<T>(in, out, reduced);
  });
}

}  // namespace loom::cpu
