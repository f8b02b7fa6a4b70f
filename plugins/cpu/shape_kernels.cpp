// CPU kernels of the shape family that only move elements: cat, flip, roll,
// tril/triu (and their in-place forms). Moving an element needs only its
// size, never its dtype (zero is all-zero bytes in every dtype), so each
// kernel is written once per element size and takes every dtype.
// Contracts: docs/kernel_conventions.md, "Shape".
#include "common.hpp"
#include "kernels.hpp"

#include <loom/plugin/strided.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace loom::cpu {
namespace {

// An unsigned integer of S bytes: one load and one store per element.
template <size_t S> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

// Calls f(Word<S>{}) for the element size of `dtype`.
template <class F>
void by_size(int32_t dtype, const char* op, F&& f) {
  switch (plugin::dtype_itemsize(dtype)) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: fail_dtype(op, dtype);
  }
}

// n zero elements at dst (stride ds): all-zero bytes are 0 in every dtype.
template <class W>
inline void zero_run(W* dst, int64_t ds, int64_t n) {
  if (n <= 0) return;
  if (ds == 1) {
    std::memset(dst, 0, static_cast<size_t>(n) * sizeof(W));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i * ds] = 0;
}

// n elements from src (stride ss) to dst (stride ds), strides in elements.
template <class W>
inline void copy_run(W* dst, int64_t ds, const W* src, int64_t ss, int64_t n) {
  if (ds == 1 && ss == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(W));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i * ds] = src[i * ss];
}

// ------------------------------------------------------------------ cat ---

struct CatPiece {
  plugin::StridedIter<2> it;  // operand 0: the output slice, 1: the input
  char* dst;
  const char* src;
  int64_t units;  // work blocks of kParallelGrain elements
};

void cat(const LoomKernelCall& c) {
  expect_values(c, "cat", 2);
  const int64_t n = c.values[0].u.i;
  expect_arity(c, "cat", static_cast<int32_t>(n), 1);
  const LoomTensorDesc& out = c.outputs[0];
  const int64_t d = c.values[1].u.i;
  const size_t isz = plugin::dtype_itemsize(out.dtype);
  std::vector<CatPiece> pieces(static_cast<size_t>(n));
  std::vector<int64_t> first_unit(static_cast<size_t>(n) + 1, 0);  // prefix sums of units
  int64_t at = 0, total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const LoomTensorDesc& in = c.inputs[i];
    if (in.dtype != out.dtype || in.ndim != out.ndim) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu cat: input %lld has dtype %s and %d dims, the output %s and %d",
           static_cast<long long>(i), plugin::dtype_name(in.dtype), in.ndim, plugin::dtype_name(out.dtype), out.ndim);
    CatPiece& p = pieces[static_cast<size_t>(i)];
    const int64_t* strides[2] = {out.strides, in.strides};
    const int64_t count = p.it.init(in.ndim, in.shape, strides);
    p.dst = static_cast<char*>(out.data) + out.byte_offset + static_cast<uint64_t>(at * out.strides[d]) * isz;
    p.src = static_cast<const char*>(in.data) + in.byte_offset;
    p.units = (count + kParallelGrain - 1) / kParallelGrain;
    first_unit[static_cast<size_t>(i) + 1] = first_unit[static_cast<size_t>(i)] + p.units;
    at += in.shape[d];
    total += count;
  }
  by_size(out.dtype, "cat", [&](auto word) {
    using W = decltype(word);
    auto run_piece = [&](const CatPiece& p, int64_t begin, int64_t end) {
      p.it.for_each_run(begin, end, [&](const int64_t* off, int64_t len) {
        copy_run(reinterpret_cast<W*>(p.dst) + off[0], p.it.inner_stride(0),
                 reinterpret_cast<const W*>(p.src) + off[1], p.it.inner_stride(1), len);
      });
    };
    if (total <= kParallelGrain) {
      for (const CatPiece& p : pieces) run_piece(p, 0, p.it.numel);
      return;
    }
    // Many small inputs and a few large ones alike split into blocks of
    // kParallelGrain elements, shared out across the team.
    parallel_for(first_unit.back(), 1, [&](int64_t ub, int64_t ue) {
      size_t i = static_cast<size_t>(std::upper_bound(first_unit.begin(), first_unit.end(), ub) -
                                     first_unit.begin()) - 1;
      for (int64_t u = ub; u < ue; ++u) {
        while (u >= first_unit[i + 1]) ++i;
        const CatPiece& p = pieces[i];
        const int64_t b = (u - first_unit[i]) * kParallelGrain;
        run_piece(p, b, std::min(b + kParallelGrain, p.it.numel));
      }
    });
  });
}

// ----------------------------------------------------------- flip, roll ---

// out[i...] = in[map(i)...] where, per dim, map is the identity, a flip
// (n-1-i) or a roll by shift s (i-s mod n). Walks output rows of the last
// dim; each row is one or two runs of the input.
struct Remap {
  int32_t ndim;
  const int64_t* shape;
  std::vector<uint8_t> flip;
  std::vector<int64_t> shift;
};

template <class W>
void remap_rows(const LoomTensorDesc& in, const LoomTensorDesc& out, const Remap& m) {
  const int32_t nd = m.ndim;
  const W* src = plugin::data_ptr<const W>(in);
  W* dst = plugin::data_ptr<W>(out);
  if (nd == 0) {
    *dst = *src;
    return;
  }
  const int64_t len = m.shape[nd - 1];
  int64_t rows = 1;
  for (int32_t d = 0; d < nd - 1; ++d) rows *= m.shape[d];
  if (len == 0 || rows == 0) return;
  const int64_t is = in.strides[nd - 1], os = out.strides[nd - 1];
  const bool flip_last = m.flip[nd - 1] != 0;
  const int64_t s = m.shift[nd - 1];
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      int64_t rest = r, ioff = 0, ooff = 0;
      for (int32_t d = nd - 2; d >= 0; --d) {
        const int64_t n = m.shape[d];
        const int64_t i = rest % n;
        rest /= n;
        int64_t j = m.flip[d] ? n - 1 - i : i;
        if (m.shift[d]) j = j >= m.shift[d] ? j - m.shift[d] : j - m.shift[d] + n;
        ioff += j * in.strides[d];
        ooff += i * out.strides[d];
      }
      const W* irow = src + ioff;
      W* orow = dst + ooff;
      if (flip_last && os == 1 && is == 1) {
        const W* iend = irow + (len - 1);  // unit strides: a loop the compiler vectorises
        for (int64_t k = 0; k < len; ++k) orow[k] = iend[-k];
      } else if (flip_last) {
        for (int64_t k = 0; k < len; ++k) orow[k * os] = irow[(len - 1 - k) * is];
      } else {
        // out[s..len) = in[0..len-s), out[0..s) = in[len-s..len)
        copy_run(orow + s * os, os, irow, is, len - s);
        copy_run(orow, os, irow + (len - s) * is, is, s);
      }
    }
  });
}

void run_remap(const LoomKernelCall& c, const char* op, const Remap& m) {
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(in, out, op);
  by_size(out.dtype, op, [&](auto word) { remap_rows<decltype(word)>(in, out, m); });
}

void flip(const LoomKernelCall& c) {
  expect_arity(c, "flip", 1, 1);
  expect_values(c, "flip", 1);
  const LoomTensorDesc& out = c.outputs[0];
  Remap m{out.ndim, out.shape, std::vector<uint8_t>(static_cast<size_t>(out.ndim), 0),
          std::vector<int64_t>(static_cast<size_t>(out.ndim), 0)};
  const LoomValue& dims = c.values[0];
  for (int64_t i = 0; i < dims.u.ints.size; ++i) {
    const int64_t d = dims.u.ints.data[i];
    if (d < 0 || d >= out.ndim) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu flip: dim %lld out of range for %d dims",
           static_cast<long long>(d), out.ndim);
    m.flip[static_cast<size_t>(d)] = 1;
  }
  run_remap(c, "flip", m);
}

void roll(const LoomKernelCall& c) {
  expect_arity(c, "roll", 1, 1);
  expect_values(c, "roll", 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomValue& shifts = c.values[0];
  if (shifts.u.ints.size != out.ndim) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu roll: expected one shift per dim (%d), got %lld", out.ndim,
         static_cast<long long>(shifts.u.ints.size));
  Remap m{out.ndim, out.shape, std::vector<uint8_t>(static_cast<size_t>(out.ndim), 0),
          std::vector<int64_t>(shifts.u.ints.data, shifts.u.ints.data + shifts.u.ints.size)};
  for (int32_t d = 0; d < out.ndim; ++d)
    if (m.shift[d] < 0 || (m.shift[d] > 0 && m.shift[d] >= out.shape[d])) [[unlikely]]
      fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu roll: shift %lld of dim %d is not in [0, %lld)",
           static_cast<long long>(m.shift[d]), d, static_cast<long long>(out.shape[d]));
  run_remap(c, "roll", m);
}

// ------------------------------------------------------------ tril/triu ---

// Rows of the last two dims: for matrix row i, columns [lo, hi) are kept
// (copied from the input unless in place), the others zeroed.
template <class W, bool Lower, bool InPlace>
void triangle_rows(const LoomTensorDesc& in, const LoomTensorDesc& out, int64_t k) {
  const int32_t nd = out.ndim;
  const int64_t R = out.shape[nd - 2], C = out.shape[nd - 1];
  int64_t rows = R;
  for (int32_t d = 0; d < nd - 2; ++d) rows *= out.shape[d];
  if (rows == 0 || C == 0) return;
  const W* src = plugin::data_ptr<const W>(in);
  W* dst = plugin::data_ptr<W>(out);
  const int64_t is = in.strides[nd - 1], os = out.strides[nd - 1];
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / C), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      const int64_t i = r % R;
      int64_t rest = r / R, ioff = i * in.strides[nd - 2], ooff = i * out.strides[nd - 2];
      for (int32_t d = nd - 3; d >= 0; --d) {
        const int64_t idx = rest % out.shape[d];
        rest /= out.shape[d];
        ioff += idx * in.strides[d];
        ooff += idx * out.strides[d];
      }
      const int64_t lo = Lower ? 0 : std::clamp<int64_t>(i + k, 0, C);
      const int64_t hi = Lower ? std::clamp<int64_t>(i + k + 1, 0, C) : C;
      W* orow = dst + ooff;
      zero_run(orow, os, lo);
      if (!InPlace) copy_run(orow + lo * os, os, src + ioff + lo * is, is, hi - lo);
      zero_run(orow + hi * os, os, C - hi);
    }
  });
}

template <bool Lower, bool InPlace>
void triangle(const LoomKernelCall& c) {
  const char* op = Lower ? (InPlace ? "tril_" : "tril") : (InPlace ? "triu_" : "triu");
  expect_arity(c, op, 1, 1);
  expect_values(c, op, 1);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(in, out, op);
  if (out.ndim < 2) [[unlikely]]
    fail(LOOM_STATUS_INVALID_ARGUMENT, "cpu %s: expected at least 2 dims, got %d", op, out.ndim);
  const int64_t k = c.values[0].u.i;
  by_size(out.dtype, op, [&](auto word) { triangle_rows<decltype(word), Lower, InPlace>(in, out, k); });
}

}  // namespace

void register_shape_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("cat", "cpu", kernel<cat>, kAllMask);
  r.kernel("flip", "cpu", kernel<flip>, kAllMask);
  r.kernel("roll", "cpu", kernel<roll>, kAllMask);
  r.kernel("tril", "cpu", kernel<triangle<true, false>>, kAllMask);
  r.kernel("triu", "cpu", kernel<triangle<false, false>>, kAllMask);
  r.kernel("tril_", "cpu", kernel<triangle<true, true>>, kAllMask);
  r.kernel("triu_", "cpu", kernel<triangle<false, true>>, kAllMask);
}

}  // namespace loom::cpu
