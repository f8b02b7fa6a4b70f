// Mask-driven indexing kernels: masked_fill_ (elementwise), and the two
// compactions whose output size the core counted beforehand, nonzero and
// masked_select. A compaction splits the input into chunks, counts each
// chunk in parallel, turns the counts into output offsets (an exclusive
// prefix sum) and fills each chunk's slice of the output in parallel; the
// output keeps row-major order whatever the thread count.
#include "common.hpp"
#include "kernels.hpp"
#include "indexing.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <vector>

namespace loom::cpu {
namespace {

template <class T>
inline bool nonzero_value(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(v) != 0.0f;
  else return v != T(0);
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
  fail_dtype("masked_select", dtype);
}

// Runs count(b, e) -> int64 over chunks of [0, n), checks the total is
// `expected` (the size the core allocated), then fill(b, e, first) with each
// chunk's first output row.
template <class Count, class Fill>
void compact(const char* op, int64_t n, int64_t expected, Count&& count, Fill&& fill) {
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(max_threads(), n / kParallelGrain));
  const int64_t step = (n + chunks - 1) / chunks;
  std::vector<int64_t> first(static_cast<size_t>(chunks) + 1, 0);
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) first[k + 1] = count(k * step, std::min(n, (k + 1) * step));
  });
  for (int64_t k = 0; k < chunks; ++k) first[k + 1] += first[k];
  if (first[chunks] != expected) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: the output has room for %lld elements but the input selects %lld",
         op, static_cast<long long>(expected), static_cast<long long>(first[chunks]));
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) fill(k * step, std::min(n, (k + 1) * step), first[k]);
  });
}

// ---- masked_fill_ ------------------------------------------------------------------------

// inputs: self (= outputs[0]), bool mask read as self's shape; values: value.
void masked_fill_(const LoomKernelCall& c) {
  expect_arity(c, "masked_fill_", 2, 1);
  expect_values(c, "masked_fill_", 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& mask = c.inputs[1];
  expect_like(mask, out, "masked_fill_", false);
  if (mask.dtype != LOOM_DTYPE_BOOL) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu masked_fill_: mask must be bool, got %s", plugin::dtype_name(mask.dtype));
  dispatch<DTypes::All>(out.dtype, "masked_fill_", [&](auto tag) {
    using T = decltype(tag);
    const T v = scalar_as<T>(c.values[0]);
    T* po = plugin::data_ptr<T>(out);
    const bool* pm = plugin::data_ptr<const bool>(mask);
    const int64_t* strides[2] = {out.strides, mask.strides};
    plugin::StridedIter<2> it;
    const int64_t n = it.init(out.ndim, out.shape, strides);
    const int64_t so = it.inner_stride(0), sm = it.inner_stride(1);
    parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
      it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
        T* o = po + off[0];
        const bool* m = pm + off[1];
        for (int64_t k = 0; k < cnt; ++k)
          if (m[k * sm]) o[k * so] = v;
      });
    });
  });
}

// ---- nonzero -----------------------------------------------------------------------------

// inputs: self (any shape); outputs: int64 [n, self.ndim], n counted by the core.
void nonzero(const LoomKernelCall& c) {
  expect_arity(c, "nonzero", 1, 1);
  const LoomTensorDesc& x = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  if (out.ndim != 2 || out.dtype != LOOM_DTYPE_INT64 || out.shape[1] != x.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu nonzero: output must be int64 [n, %d]", x.ndim);
  dispatch<DTypes::All>(x.dtype, "nonzero", [&](auto tag) {
    using T = decltype(tag);
    const T* px = plugin::data_ptr<const T>(x);
    int64_t* po = plugin::data_ptr<int64_t>(out);
    const int64_t r_stride = out.strides[0], c_stride = out.strides[1];
    const int32_t nd = x.ndim;
    const int64_t* strides[1] = {x.strides};
    plugin::StridedIter<1> it;
    const int64_t n = it.init(nd, x.shape, strides);
    const int64_t sx = it.inner_stride(0);
    auto count = [&](int64_t b, int64_t e) {
      int64_t found = 0;
      it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
        const T* p = px + off[0];
        for (int64_t k = 0; k < cnt; ++k) found += nonzero_value(p[k * sx]) ? 1 : 0;
      });
      return found;
    };
    // Coordinates are in the input's own dims, so this walks them with an
    // odometer rather than the simplified iterator.
    auto fill = [&](int64_t b, int64_t e, int64_t row) {
      if (nd == 0 || b >= e) return;  // rows of zero coordinates, or nothing
      int64_t idx[plugin::kMaxIterDims];
      int64_t rest = b, offset = 0;
      for (int32_t d = nd - 1; d >= 0; --d) {
        idx[d] = rest % x.shape[d];
        rest /= x.shape[d];
        offset += idx[d] * x.strides[d];
      }
      const int64_t inner = x.shape[nd - 1], si = x.strides[nd - 1];
      for (int64_t l = b; l < e;) {
        const int64_t run = std::min(inner - idx[nd - 1], e - l);
        for (int64_t k = 0; k < run; ++k) {
          if (!nonzero_value(px[offset + k * si])) continue;
          int64_t* o = po + row++ * r_stride;
          for (int32_t d = 0; d < nd - 1; ++d) o[d * c_stride] = idx[d];
          o[(nd - 1) * c_stride] = idx[nd - 1] + k;
        }
        l += run;
        offset += run * si;
        idx[nd - 1] += run;
        for (int32_t d = nd - 1; d > 0 && idx[d] == x.shape[d]; --d) {  // odometer carry
          offset -= idx[d] * x.strides[d];
          idx[d] = 0;
          ++idx[d - 1];
          offset += x.strides[d - 1];
        }
      }
    };
    compact("nonzero", n, out.shape[0], count, fill);
  });
}

// ---- masked_select -----------------------------------------------------------------------

// inputs: self and bool mask, both read as the broadcast shape; outputs: [n].
void masked_select(const LoomKernelCall& c) {
  expect_arity(c, "masked_select", 2, 1);
  const LoomTensorDesc& x = c.inputs[0];
  const LoomTensorDesc& mask = c.inputs[1];
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(mask, x, "masked_select", false);
  if (mask.dtype != LOOM_DTYPE_BOOL || out.ndim != 1 || out.dtype != x.dtype) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu masked_select: expected a bool mask and a 1-D output of self's dtype");
  dispatch_bits(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* px = plugin::data_ptr<const T>(x);
    const bool* pm = plugin::data_ptr<const bool>(mask);
    T* po = plugin::data_ptr<T>(out);
    const int64_t so = out.strides[0];
    const int64_t* strides[2] = {x.strides, mask.strides};
    plugin::StridedIter<2> it;
    const int64_t n = it.init(x.ndim, x.shape, strides);
    const int64_t sx = it.inner_stride(0), sm = it.inner_stride(1);
    auto count = [&](int64_t b, int64_t e) {
      int64_t found = 0;
      it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
        const bool* m = pm + off[1];
        for (int64_t k = 0; k < cnt; ++k) found += m[k * sm] ? 1 : 0;
      });
      return found;
    };
    auto fill = [&](int64_t b, int64_t e, int64_t row) {
      it.for_each_run(b, e, [&](const int64_t* off, int64_t cnt) {
        const T* p = px + off[0];
        const bool* m = pm + off[1];
        for (int64_t k = 0; k < cnt; ++k)
          if (m[k * sm]) po[row++ * so] = p[k * sx];
      });
    };
    compact("masked_select", n, out.shape[0], count, fill);
  });
}

}  // namespace

void register_masked_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("masked_fill_.Scalar", "cpu", kernel<masked_fill_>, kAllMask);
  r.kernel("nonzero", "cpu", kernel<nonzero>, kAllMask);
  r.kernel("masked_select", "cpu", kernel<masked_select>, kAllMask);
}

}  // namespace loom::cpu
