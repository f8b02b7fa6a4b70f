// Gather- and scatter-style indexing kernels: gather and index_select (one
// kernel: the core hands index_select's index over as a view of the output's
// shape), scatter_ (src), scatter_add_ and index_add_ (one driver: the core
// hands index_add_'s index over as a view of source's shape).
//
// gather writes every output element independently, so it runs in parallel
// over all of them. The scatters may hit one self element from many index
// positions, but only positions that agree off `dim` can collide; so they
// run in parallel over the kept (non-`dim`) positions and sequentially along
// `dim`, which is race-free and keeps "last write wins" in index order.
//
// An out-of-range index is never written: the first one seen is recorded
// and reported once the loop is done (OpenMP bodies must not throw).
#include "common.hpp"
#include "indexing.hpp"
#include "kernels.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace loom::cpu {
namespace {

template <class F>
void dispatch_index(int32_t dtype, const char* op, F&& f) {
  if (dtype == LOOM_DTYPE_INT64) return f(int64_t{});
  if (dtype == LOOM_DTYPE_INT32) return f(int32_t{});
  fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: index must be int64 or int32, got %s", op,
       plugin::dtype_name(dtype));
}

template <class F>
void dispatch_bits(int32_t dtype, F&& f) {
  switch (plugin::dtype_itemsize(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: break;
  }
  fail_dtype("indexing", dtype);
}

int32_t dim_value(const LoomKernelCall& c, const char* op, const LoomTensorDesc& self) {
  expect_values(c, op, 1);
  const int64_t dim = c.values[0].u.i;
  if (dim < 0 || dim >= self.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: dim %lld out of range for %d-d self", op,
         static_cast<long long>(dim), self.ndim);
  return static_cast<int32_t>(dim);
}

// ---- gather / index_select ----------------------------------------------------------

template <class T, class I>
void gather_typed(const LoomTensorDesc& self, const LoomTensorDesc& index, const LoomTensorDesc& out,
                  int32_t dim, BadIndex& bad) {
  const T* ps = plugin::data_ptr<const T>(self);
  const I* pi = plugin::data_ptr<const I>(index);
  T* po = plugin::data_ptr<T>(out);
  const int64_t size = self.shape[dim], sdim = self.strides[dim];
  int64_t sstr[plugin::kMaxIterDims];
  std::copy(self.strides, self.strides + self.ndim, sstr);
  sstr[dim] = 0;  // the index supplies the position along dim
  const int64_t* strides[3] = {sstr, index.strides, out.strides};
  plugin::StridedIter<3> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t ss = it.inner_stride(0), si = it.inner_stride(1), so = it.inner_stride(2);
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
      const T* s = ps + off[0];
      const I* ix = pi + off[1];
      T* o = po + off[2];
      if (si == 0) {  // one index for the run (index_select's rows): a strided copy
        const int64_t i = static_cast<int64_t>(ix[0]);
        if (!in_bounds(i, size)) [[unlikely]]
          return bad.record(i);
        const T* src = s + i * sdim;
        if (ss == 1 && so == 1) std::memcpy(o, src, static_cast<size_t>(cnt) * sizeof(T));
        else
          for (int64_t k = 0; k < cnt; ++k) o[k * so] = src[k * ss];
        return;
      }
      for (int64_t k = 0; k < cnt; ++k) {
        const int64_t i = static_cast<int64_t>(ix[k * si]);
        if (!in_bounds(i, size)) [[unlikely]] {
          bad.record(i);
          continue;
        }
        o[k * so] = s[k * ss + i * sdim];
      }
    });
  });
}

// inputs: self, index (the output's shape); values: dim.
template <const char* Op>
void gather_kernel(const LoomKernelCall& c) {
  expect_arity(c, Op, 2, 1);
  const LoomTensorDesc& self = c.inputs[0];
  const LoomTensorDesc& index = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  const int32_t dim = dim_value(c, Op, self);
  expect_like(index, out, Op, false);
  if (self.ndim != out.ndim || self.dtype != out.dtype) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: self and output differ in ndim or dtype", Op);
  BadIndex bad;
  dispatch_bits(self.dtype, [&](auto t) {
    dispatch_index(index.dtype, Op, [&](auto i) {
      gather_typed<decltype(t), decltype(i)>(self, index, out, dim, bad);
    });
  });
  bad.report(Op, dim, self.shape[dim]);
}

// ---- scatter_ / scatter_add_ / index_add_ -----------------------------------------------

enum class Combine { Assign, Add };

// dst[k] = src[k] or dst[k] += a * src[k] over contiguous rows (vectorises).
template <Combine C, class T, class Acc>
void update_row(T* dst, const T* src, int64_t n, Acc a, bool scaled) {
  if constexpr (C == Combine::Assign) {
    std::memmove(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else if (scaled) {
    for (int64_t k = 0; k < n; ++k) dst[k] = from_arith<T>(static_cast<Acc>(to_arith(dst[k]) + static_cast<Acc>(to_arith(src[k]) * a)));
  } else {
    for (int64_t k = 0; k < n; ++k) dst[k] = from_arith<T>(static_cast<Acc>(to_arith(dst[k]) + to_arith(src[k])));
  }
}

template <Combine C, class T, class I>
void scatter_typed(const LoomTensorDesc& self, const LoomTensorDesc& index, const LoomTensorDesc& src,
                   int32_t dim, const LoomValue* alpha, BadIndex& bad) {
  using Acc = arith_t<T>;
  T* ps = plugin::data_ptr<T>(self);
  const I* pi = plugin::data_ptr<const I>(index);
  const T* pv = plugin::data_ptr<const T>(src);
  Acc a = Acc(1);
  if constexpr (C == Combine::Add)
    if (alpha) a = to_arith(scalar_as<T>(*alpha));
  const bool scaled = !(a == Acc(1));
  // Kept dims: every dim of the loop (index) shape but `dim`.
  int64_t shape[plugin::kMaxIterDims], s0[plugin::kMaxIterDims], s1[plugin::kMaxIterDims],
      s2[plugin::kMaxIterDims];
  int32_t nk = 0;
  for (int32_t d = 0; d < index.ndim; ++d) {
    if (d == dim) continue;
    shape[nk] = index.shape[d];
    s0[nk] = self.strides[d];
    s1[nk] = index.strides[d];
    s2[nk++] = src.strides[d];
  }
  const int64_t* strides[3] = {s0, s1, s2};
  plugin::StridedIter<3> it;
  const int64_t kept = it.init(nk, shape, strides);
  const int64_t len = index.shape[dim];
  if (kept == 0 || len == 0) return;
  const int64_t size = self.shape[dim], sd = self.strides[dim], id = index.strides[dim], vd = src.strides[dim];
  const int64_t ss = it.inner_stride(0), si = it.inner_stride(1), sv = it.inner_stride(2);
  auto apply = [&](T& dst, T v) {
    if constexpr (C == Combine::Assign) {
      dst = v;
    } else {
      Acc x = to_arith(v);
      if (scaled) x = static_cast<Acc>(x * a);
      dst = from_arith<T>(static_cast<Acc>(to_arith(dst) + x));
    }
  };
  // Walk `dim` outside (the inner loop then runs along a kept run) when the
  // runs are long and more contiguous than `dim` itself; else walk `dim`
  // inside each kept position.
  const bool dim_outer = it.inner_size() >= 16 && std::abs(si) + std::abs(sv) <= std::abs(id) + std::abs(vd);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / len);
  parallel_for(kept, grain, [&](int64_t b, int64_t e) {
    if (dim_outer) {
      for (int64_t j = 0; j < len; ++j) {
        it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
          T* s = ps + off[0];
          const I* ix = pi + off[1] + j * id;
          const T* v = pv + off[2] + j * vd;
          if (si == 0) {  // one index for the run (index_add_): a row update
            const int64_t i = static_cast<int64_t>(ix[0]);
            if (!in_bounds(i, size)) [[unlikely]]
              return bad.record(i);
            T* row = s + i * sd;
            if (ss == 1 && sv == 1) update_row<C>(row, v, cnt, a, scaled);
            else
              for (int64_t k = 0; k < cnt; ++k) apply(row[k * ss], v[k * sv]);
            return;
          }
          for (int64_t k = 0; k < cnt; ++k) {
            const int64_t i = static_cast<int64_t>(ix[k * si]);
            if (!in_bounds(i, size)) [[unlikely]] {
              bad.record(i);
              continue;
            }
            apply(s[k * ss + i * sd], v[k * sv]);
          }
        });
      }
      return;
    }
    it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
      for (int64_t k = 0; k < cnt; ++k) {
        T* s = ps + off[0] + k * ss;
        const I* ix = pi + off[1] + k * si;
        const T* v = pv + off[2] + k * sv;
        for (int64_t j = 0; j < len; ++j) {
          const int64_t i = static_cast<int64_t>(ix[j * id]);
          if (!in_bounds(i, size)) [[unlikely]] {
            bad.record(i);
            continue;
          }
          apply(s[i * sd], v[j * vd]);
        }
      }
    });
  });
}

// inputs: self (= outputs[0]), index (the loop shape), src (read over the
// loop shape); values: dim[, alpha].
template <Combine C, const char* Op>
void scatter_kernel(const LoomKernelCall& c) {
  expect_arity(c, Op, 3, 1);
  const LoomTensorDesc& self = c.outputs[0];
  const LoomTensorDesc& index = c.inputs[1];
  const LoomTensorDesc& src = c.inputs[2];
  const int32_t dim = dim_value(c, Op, self);
  if (index.ndim != self.ndim || src.ndim != self.ndim || src.dtype != self.dtype) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: self, index and src differ in ndim or dtype", Op);
  const LoomValue* alpha = c.num_values > 1 ? &c.values[1] : nullptr;
  BadIndex bad;
  auto run = [&](auto t) {
    dispatch_index(index.dtype, Op, [&](auto i) {
      scatter_typed<C, decltype(t), decltype(i)>(self, index, src, dim, alpha, bad);
    });
  };
  if constexpr (C == Combine::Assign) dispatch_bits(self.dtype, run);
  else dispatch<DTypes::All>(self.dtype, Op, run);
  bad.report(Op, dim, self.shape[dim]);
}

constexpr char kGather[] = "gather";
constexpr char kIndexSelect[] = "index_select";
constexpr char kScatter[] = "scatter_";
constexpr char kScatterAdd[] = "scatter_add_";
constexpr char kIndexAdd[] = "index_add_";

}  // namespace

void BadIndex::report(const char* op, int32_t dim, int64_t size) const {
  if (!seen.load(std::memory_order_acquire)) return;
  fail(LOOM_STATUS_INVALID_ARGUMENT, "%s: index %lld is out of bounds for dimension %d with size %lld", op,
       static_cast<long long>(value), dim, static_cast<long long>(size));
}

void register_indexing_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("gather", "cpu", kernel<gather_kernel<kGather>>, kAllMask);
  r.kernel("index_select", "cpu", kernel<gather_kernel<kIndexSelect>>, kAllMask);
  r.kernel("scatter_.src", "cpu", kernel<scatter_kernel<Combine::Assign, kScatter>>, kAllMask);
  r.kernel("scatter_add_", "cpu", kernel<scatter_kernel<Combine::Add, kScatterAdd>>, kAllMask);
  r.kernel("index_add_", "cpu", kernel<scatter_kernel<Combine::Add, kIndexAdd>>, kAllMask);
}

}  // namespace loom::cpu
