// fill_ and copy_: writing a scalar, or another tensor converted to self's
// dtype, into self in whatever layout self has. The conversion rules are
// plugin/cast.hpp (saturating float -> int, NaN -> 0, round-to-nearest-even
// into 16-bit floats), so every dtype pair is defined for every value.
#include "common.hpp"
#include "kernels.hpp"
#include "loops.hpp"

#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace loom::cpu {
namespace {

template <class T>
void fill_typed(const LoomTensorDesc& out, T v) {
  T* po = plugin::data_ptr<T>(out);
  if (plugin::is_contiguous(out)) {
    parallel_for(plugin::numel(out), kParallelGrain,
                 [&](int64_t s, int64_t e) { fill_flat(po + s, e - s, v); });
    return;
  }
  const int64_t* strides[1] = {out.strides};
  plugin::StridedIter<1> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0);
  parallel_for(n, kParallelGrain, [&](int64_t s, int64_t e) {
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      T* o = po + off[0];
      if (so == 1) fill_flat(o, len, v);
      else for (int64_t i = 0; i < len; ++i) o[i * so] = v;
    });
  });
}

// [first, last) bytes a descriptor can touch (strides are non-negative).
struct ByteRange {
  const char* first;
  const char* last;
};
ByteRange byte_range(const LoomTensorDesc& t) {
  const int64_t item = static_cast<int64_t>(plugin::dtype_itemsize(t.dtype));
  int64_t span = 1;
  for (int32_t d = 0; d < t.ndim; ++d) span += (t.shape[d] - 1) * t.strides[d];
  const char* first = static_cast<const char*>(t.data) + t.byte_offset;
  return {first, first + span * item};
}

bool same_layout(const LoomTensorDesc& a, const LoomTensorDesc& b) {
  if (a.data != b.data || a.byte_offset != b.byte_offset || a.dtype != b.dtype) return false;
  for (int32_t d = 0; d < a.ndim; ++d)
    if (a.strides[d] != b.strides[d] && a.shape[d] != 1) return false;
  return true;
}

// Reading src while writing out is only safe element for element; a partial
// overlap (x.copy_(x.t())) must read everything first.
bool needs_staging(const LoomTensorDesc& out, const LoomTensorDesc& src) {
  if (out.data == nullptr || out.data != src.data) return false;
  const ByteRange a = byte_range(out), b = byte_range(src);
  return a.first < b.last && b.first < a.last;
}

template <class To, class From>
void copy_typed(const LoomTensorDesc& out, const LoomTensorDesc& src) {
  if constexpr (std::is_same_v<To, From>) {
    if (all_contiguous(out, src)) {
      To* po = plugin::data_ptr<To>(out);
      const From* ps = plugin::data_ptr<const From>(src);
      parallel_for(plugin::numel(out), kParallelGrain, [&](int64_t s, int64_t e) {
        std::memcpy(po + s, ps + s, static_cast<size_t>(e - s) * sizeof(To));
      });
      return;
    }
  }
  apply_unary<To, From>(out, src, [](From v) { return plugin::cast<To>(v); });
}

// Copies src into a fresh contiguous buffer and runs the cast from there.
template <class To, class From>
void copy_staged(const LoomTensorDesc& out, const LoomTensorDesc& src) {
  const int64_t n = plugin::numel(src);
  std::unique_ptr<From[]> buf(new From[static_cast<size_t>(n)]);
  std::vector<int64_t> strides(static_cast<size_t>(src.ndim));
  int64_t s = 1;
  for (int32_t d = src.ndim - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = s;
    s *= src.shape[d];
  }
  LoomTensorDesc tmp = src;
  tmp.data = buf.get();
  tmp.byte_offset = 0;
  tmp.strides = strides.data();
  copy_typed<From, From>(tmp, src);
  copy_typed<To, From>(out, tmp);
}

}  // namespace

void fill_(const LoomKernelCall& c) {
  expect_arity(c, "fill_", 1, 1);
  expect_values(c, "fill_", 1);
  const LoomTensorDesc& out = c.outputs[0];
  dispatch<DTypes::All>(out.dtype, "fill_", [&](auto tag) {
    using T = decltype(tag);
    fill_typed<T>(out, scalar_as<T>(c.values[0]));
  });
}

void copy_(const LoomKernelCall& c) {
  expect_arity(c, "copy_", 2, 1);
  const LoomTensorDesc& out = c.outputs[0];
  const LoomTensorDesc& src = c.inputs[1];
  expect_like(src, out, "copy_", /*same_dtype=*/false);
  if (same_layout(out, src)) return;  // x.copy_(x)
  const bool stage = needs_staging(out, src);
  dispatch<DTypes::All>(out.dtype, "copy_", [&](auto to_tag) {
    using To = decltype(to_tag);
    dispatch<DTypes::All>(src.dtype, "copy_", [&](auto from_tag) {
      using From = decltype(from_tag);
      if (stage) copy_staged<To, From>(out, src);
      else copy_typed<To, From>(out, src);
    });
  });
}

void register_fill_copy_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("fill_", "cpu", kernel<fill_>, kAllMask);
  r.kernel("copy_", "cpu", kernel<copy_>, kAllMask);
}

}  // namespace loom::cpu
