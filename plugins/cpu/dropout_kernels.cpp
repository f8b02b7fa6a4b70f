// dropout (docs/kernel_conventions.md, "Loss, dropout, embedding, pad"):
// out[i] = u_i < 1 - p ? x[i] * (1 / (1 - p)) : 0, where u_i is exactly what
// uniform_ would write to element i of a float32 tensor (float64 for
// float64 inputs) with the same {seed, offset}. One pass: the draw, the test
// and the scaling fused, instead of PyTorch's bernoulli_, div_ and mul.
#include "common.hpp"
#include "nn_misc_kernels.hpp"

#include <loom/plugin/philox.hpp>
#include <loom/plugin/strided.hpp>

#include <type_traits>

namespace loom::cpu {
namespace {

// Philox dominates (compute-bound), as for uniform_.
constexpr int64_t kDropoutGrain = 8192;

template <class T>
void dropout_typed(const LoomTensorDesc& in, const LoomTensorDesc& out, double p, uint64_t seed,
                   uint64_t offset) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const C keep = static_cast<C>(1.0 - p);
  // p == 1: x * 0 as PyTorch (NaN and inf stay NaN), the scale unused.
  const bool all_dropped = p == 1;
  // The scale rounded to T first, as the composite's input * scale does.
  const C scale = static_cast<C>(plugin::cast<T>(1.0 / (1.0 - p)));
  const T* pi = plugin::data_ptr<const T>(in);
  T* po = plugin::data_ptr<T>(out);
  const int64_t* strides[2] = {out.strides, in.strides};
  plugin::StridedIter<2> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0), si = it.inner_stride(1);
  parallel_for(n, kDropoutGrain, [&](int64_t s, int64_t e) {
    uint64_t index = static_cast<uint64_t>(s);  // row-major logical index
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      T* o = po + off[0];
      const T* x = pi + off[1];
      for (int64_t k = 0; k < len; ++k, ++index) {
        const plugin::Philox4x32 blk = plugin::philox_for_element(seed, offset, index);
        C u;
        if constexpr (std::is_same_v<C, double>) u = plugin::uniform_sample_f64(blk, 0.0, 1.0);
        else u = plugin::uniform_sample_f32(blk, 0.0f, 1.0f);
        if (u < keep) o[k * so] = T(static_cast<C>(x[k * si]) * scale);
        else o[k * so] = all_dropped ? T(static_cast<C>(x[k * si]) * C(0)) : T(0.0f);
      }
    });
  });
}

}  // namespace

void dropout(const LoomKernelCall& c) {
  expect_arity(c, "dropout", 1, 1);
  expect_values(c, "dropout", 3);
  const LoomTensorDesc& in = c.inputs[0];
  const LoomTensorDesc& out = c.outputs[0];
  expect_like(in, out, "dropout");
  const double p = plugin::value_float(c, 0);
  const LoomValue& g = c.values[2];
  if (!(p >= 0 && p <= 1) || g.kind != LOOM_VALUE_INT_LIST || g.u.ints.size != 2)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu dropout: expected p in [0, 1] and a generator {seed, offset}, got p=%g", p);
  const auto seed = static_cast<uint64_t>(g.u.ints.data[0]);
  const auto offset = static_cast<uint64_t>(g.u.ints.data[1]);
  dispatch<DTypes::Floating>(out.dtype, "dropout", [&](auto tag) {
    dropout_typed<decltype(tag)>(in, out, p, seed, offset);
  });
}

}  // namespace loom::cpu
