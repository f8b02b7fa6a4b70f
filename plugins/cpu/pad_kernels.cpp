// pad (docs/kernel_conventions.md, "Loss, dropout, embedding, pad"): every
// output element reads one input element, or the fill value in constant mode,
// so the kernel walks output rows (the last dim) and maps coordinates back:
//   constant   outside the input -> fill (negative pads crop)
//   reflect    i < 0 -> -i, i >= n -> 2(n-1) - i  (the core ensures pad < n)
//   replicate  clamp(i, 0, n-1)
// The outer dims' source offsets are tabulated once per dim, so a row costs
// a few adds; the middle of a row is a straight (vectorisable) copy.
#include "common.hpp"
#include "kernels.hpp"
#include "nn_misc_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

namespace loom::cpu {
namespace {

enum class Mode { Constant, Reflect, Replicate };

Mode parse_mode(const LoomValue& v) {
  if (v.kind == LOOM_VALUE_STRING) {
    const std::string_view s(v.u.str.data, static_cast<size_t>(v.u.str.size));
    if (s == "constant") return Mode::Constant;
    if (s == "reflect") return Mode::Reflect;
    if (s == "replicate") return Mode::Replicate;
  }
  fail(LOOM_STATUS_INVALID_ARGUMENT,
       "cpu pad: mode must be the string 'constant', 'reflect' or 'replicate'");
}

// Input index for output index `o` along a dim of input size n padded by
// `before`; -1 means "the fill value" (constant mode only).
inline int64_t source_index(Mode m, int64_t o, int64_t before, int64_t n) {
  const int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (m) {
    case Mode::Constant: return -1;
    case Mode::Reflect: return i < 0 ? -i : 2 * (n - 1) - i;
    case Mode::Replicate: return i < 0 ? 0 : n - 1;
  }
  return -1;
}

struct PadArgs {
  Mode mode;
  const int64_t* pairs;  // (before, after) per dim
};

template <class T>
void pad_typed(const LoomTensorDesc& in, const LoomTensorDesc& out, const PadArgs& a, T fill) {
  const T* pi = plugin::data_ptr<const T>(in);
  T* po = plugin::data_ptr<T>(out);
  const int32_t nd = out.ndim;
  if (nd == 0) {
    *po = *pi;
    return;
  }
  const int64_t W = out.shape[nd - 1];
  const int64_t total = plugin::numel(out);
  if (total == 0) return;
  const int64_t rows = total / W;

  // src_off[d][o]: input element offset of output index o along outer dim d,
  // or -1 when that slice is all fill.
  std::vector<std::vector<int64_t>> src_off(static_cast<size_t>(nd - 1));
  for (int32_t d = 0; d + 1 < nd; ++d) {
    auto& t = src_off[static_cast<size_t>(d)];
    t.resize(static_cast<size_t>(out.shape[d]));
    for (int64_t o = 0; o < out.shape[d]; ++o) {
      const int64_t i = source_index(a.mode, o, a.pairs[2 * d], in.shape[d]);
      t[static_cast<size_t>(o)] = i < 0 ? -1 : i * in.strides[d];
    }
  }

  const int64_t before = a.pairs[2 * (nd - 1)], n = in.shape[nd - 1];
  const int64_t is = in.strides[nd - 1], os = out.strides[nd - 1];
  const int64_t mid_begin = std::clamp<int64_t>(before, 0, W);
  const int64_t mid_end = std::clamp<int64_t>(before + n, 0, W);
  const Mode mode = a.mode;

  auto fill_row = [&](const T* src, T* dst) {
    for (int64_t o = 0; o < mid_begin; ++o) {
      const int64_t i = source_index(mode, o, before, n);
      dst[o * os] = i < 0 ? fill : src[i * is];
    }
    const int64_t len = mid_end - mid_begin;
    if (len > 0) {
      const T* s = src + (mid_begin - before) * is;
      T* d = dst + mid_begin * os;
      if (is == 1 && os == 1) {
        std::copy(s, s + len, d);
      } else {
        for (int64_t k = 0; k < len; ++k) d[k * os] = s[k * is];
      }
    }
    for (int64_t o = mid_end; o < W; ++o) {
      const int64_t i = source_index(mode, o, before, n);
      dst[o * os] = i < 0 ? fill : src[i * is];
    }
  };

  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(W, 1));
  parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
    // Odometer over the outer dims, started at row r0.
    std::vector<int64_t> idx(static_cast<size_t>(nd > 1 ? nd - 1 : 0));
    for (int64_t r = r0, d = nd - 2; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = r % out.shape[d];
      r /= out.shape[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      int64_t src = 0, dst = 0;
      bool filled = false;
      for (int32_t d = 0; d + 1 < nd; ++d) {
        const int64_t o = idx[static_cast<size_t>(d)];
        const int64_t s = src_off[static_cast<size_t>(d)][static_cast<size_t>(o)];
        filled |= s < 0;
        src += s;
        dst += o * out.strides[d];
      }
      T* drow = po + dst;
      if (filled) {
        for (int64_t o = 0; o < W; ++o) drow[o * os] = fill;
      } else {
        fill_row(pi + src, drow);
      }
      for (int32_t d = nd - 2; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < out.shape[d]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
  });
}

}  // namespace

void pad(const LoomKernelCall& c) {
  expect_arity(c, "pad", 1, 1);
  expect_values(c, "pad", 3);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  const LoomValue& pv = c.values[0];
  if (pv.kind != LOOM_VALUE_INT_LIST || pv.u.ints.size != 2 * int64_t{in.ndim} ||
      out.ndim != in.ndim || out.dtype != in.dtype)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu pad: expected one (before, after) pair per input dim and an output of the input's "
         "ndim and dtype");
  const PadArgs a{parse_mode(c.values[1]), pv.u.ints.data};
  for (int32_t d = 0; d < in.ndim; ++d) {
    const int64_t before = a.pairs[2 * d], after = a.pairs[2 * d + 1], n = in.shape[d];
    const bool size_ok = out.shape[d] == n + before + after;
    // Reflect and replicate read inside [0, n): that needs n > 0 (and for
    // reflect pads < n), which the core checked; re-check, memory is at stake.
    const bool reach_ok = a.mode == Mode::Constant || out.shape[d] == 0 ||
                          (n > 0 && (a.mode == Mode::Replicate || (before < n && after < n)));
    if (!size_ok || !reach_ok)
      fail(LOOM_STATUS_INVALID_ARGUMENT,
           "cpu pad: dim %d: input size %lld with padding (%lld, %lld) does not give output size "
           "%lld, or the padding reaches outside the input",
           d, static_cast<long long>(n), static_cast<long long>(before),
           static_cast<long long>(after), static_cast<long long>(out.shape[d]));
  }
  dispatch<DTypes::All>(out.dtype, "pad", [&](auto tag) {
    using T = decltype(tag);
    pad_typed<T>(in, out, a, scalar_as<T>(c.values[2]));
  });
}

void register_pad_embedding_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("pad", "cpu", kernel<pad>, kAllMask);
  r.kernel("embedding", "cpu", kernel<embedding>, kAllMask);
}

}  // namespace loom::cpu
