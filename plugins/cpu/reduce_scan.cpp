// cumsum and cumprod: inclusive scans along one dim, output in the input's
// shape and dtype. Accumulated like sum: floating dtypes in double (so a
// long float32 cumsum does not drift), integers in wrapping uint64, bool as
// "any so far" (cumsum) or "all so far" (cumprod).
//
// Two layouts. When a kept dim is contiguous in input and output and the
// scan dim is not the innermost, up to kColumnsFor<Acc> running
// accumulators walk down the scan dim one row at a time (vectorised across
// columns).
// Otherwise each line is scanned on its own; lines run in parallel. A scan
// is sequential within a line, so results never depend on threads.
#include "common.hpp"
#include "loops.hpp"  // LOOM_CPU_CLONES
#include "reduce.hpp"
#include "reduce_ops.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>

namespace loom::cpu {
namespace {

template <class T, bool IsProd>
struct Scan {
  using Acc = std::conditional_t<plugin::is_floating_v<T>, double, uint64_t>;
  static Acc init() { return IsProd ? 1 : 0; }
  static void step(Acc& a, T x) {
    Acc v;
    if constexpr (plugin::is_floating_v<T>) v = reduce::load(x);
    else v = static_cast<uint64_t>(x);
    if constexpr (IsProd) a *= v;
    else a += v;
  }
  static T result(Acc a) { return reduce::from_acc<T>(a); }
};

template <class S, class T, class Acc>
[[gnu::flatten]] LOOM_CPU_CLONES void scan_row(Acc* acc, const T* x, T* y, int64_t nc) {
  for (int64_t j = 0; j < nc; ++j) {
    S::step(acc[j], x[j]);
    y[j] = S::result(acc[j]);
  }
}

template <class S, class T>
void scan_line(const T* x, int64_t sx, T* y, int64_t sy, int64_t len) {
  typename S::Acc a = S::init();
  for (int64_t r = 0; r < len; ++r) {
    S::step(a, x[r * sx]);
    y[r * sy] = S::result(a);
  }
}

template <class T, bool IsProd>
void scan_typed(const LoomTensorDesc& in, const LoomTensorDesc& out, int32_t dim) {
  using S = Scan<T, IsProd>;
  constexpr int64_t kCols = reduce::kColumnsFor<typename S::Acc>;
  const T* pin = plugin::data_ptr<const T>(in);
  T* pout = plugin::data_ptr<T>(out);
  // The kept dims (all but `dim`), simplified; the scan dim on its own.
  int64_t shape[plugin::kMaxIterDims], si[plugin::kMaxIterDims], so[plugin::kMaxIterDims];
  int32_t nk = 0;
  for (int32_t d = 0; d < in.ndim; ++d) {
    if (d == dim) continue;
    shape[nk] = in.shape[d];
    si[nk] = in.strides[d];
    so[nk++] = out.strides[d];
  }
  const int64_t len = in.ndim > 0 ? in.shape[dim] : 1;
  const int64_t sx = in.ndim > 0 ? in.strides[dim] : 0, sy = in.ndim > 0 ? out.strides[dim] : 0;
  const int64_t* strides[2] = {si, so};
  plugin::StridedIter<2> kept;
  const int64_t lines = kept.init(nk, shape, strides);
  if (lines == 0 || len == 0) return;
  const int64_t cols = kept.inner_size();
  if (cols > 1 && len > 1 && kept.inner_stride(0) == 1 && kept.inner_stride(1) == 1 && sx != 1) {
    const int64_t blocks = (cols + kCols - 1) / kCols;
    const int64_t width = std::min(cols, kCols);
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / (len * width));
    parallel_for(lines / cols * blocks, grain, [&](int64_t s, int64_t e) {
      typename S::Acc acc[kCols];
      for (int64_t w = s; w < e; ++w) {
        const int64_t c0 = (w % blocks) * kCols;
        const int64_t nc = std::min(kCols, cols - c0);
        int64_t oi = 0, oo = 0;
        kept.for_each_run(w / blocks * cols + c0, w / blocks * cols + c0 + 1,
                          [&](const int64_t* off, int64_t) {
                            oi = off[0];
                            oo = off[1];
                          });
        for (int64_t j = 0; j < nc; ++j) acc[j] = S::init();
        for (int64_t r = 0; r < len; ++r) scan_row<S>(acc, pin + oi + r * sx, pout + oo + r * sy, nc);
      }
    });
    return;
  }
  const int64_t ki = kept.inner_stride(0), ko = kept.inner_stride(1);
  parallel_for(lines, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t s, int64_t e) {
    kept.for_each_run(s, e, [&](const int64_t* off, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        scan_line<S>(pin + off[0] + i * ki, sx, pout + off[1] + i * ko, sy, len);
    });
  });
}

template <bool IsProd>
void scan(const LoomKernelCall& c, const char* name) {
  expect_arity(c, name, 1, 1);
  expect_values(c, name, 1);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(out, in, name);
  if (in.ndim < 0 || in.ndim > plugin::kMaxIterDims)
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: bad input ndim %d", name, in.ndim);
  const LoomValue& v = c.values[0];
  int64_t dim = -1;
  if (v.kind == LOOM_VALUE_INT) dim = v.u.i;
  else if (v.kind == LOOM_VALUE_INT_LIST && v.u.ints.size == 1) dim = v.u.ints.data[0];
  if (dim < 0 || dim >= (in.ndim > 0 ? in.ndim : 1))  // a 0-d input scans as one element
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: bad scan dim (value kind %d, dim %lld) for %d dims",
         name, v.kind, static_cast<long long>(dim), in.ndim);
  dispatch<DTypes::All>(in.dtype, name, [&](auto tag) {
    scan_typed<decltype(tag), IsProd>(in, out, static_cast<int32_t>(dim));
  });
}

}  // namespace

void cumsum(const LoomKernelCall& c) { scan<false>(c, "cumsum"); }
void cumprod(const LoomKernelCall& c) { scan<true>(c, "cumprod"); }

}  // namespace loom::cpu
