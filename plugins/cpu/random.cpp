// uniform_ and normal_: one Philox4x32-10 block per element, keyed by the
// generator's seed and counted from its offset plus the element's row-major
// logical index (plugin/philox.hpp, docs/kernel_conventions.md). Since the
// value depends only on that index, strides and thread splits cannot change
// the result: StridedIter keeps row-major order, so the linear index of a
// run is the logical index of its first element.
#include "common.hpp"
#include "kernels.hpp"
#include "nn_misc_kernels.hpp"

#include <loom/plugin/philox.hpp>
#include <loom/plugin/strided.hpp>

namespace loom::cpu {
namespace {

// Philox is compute-bound (~10 multiply rounds per element), so threads pay
// off earlier than for memory-bound loops.
constexpr int64_t kRandomGrain = 8192;

struct GeneratorState {
  uint64_t seed, offset;
};

GeneratorState generator_state(const LoomKernelCall& c, const char* op) {
  expect_values(c, op, 3);
  const LoomValue& v = c.values[2];
  if (v.kind != LOOM_VALUE_INT_LIST || v.u.ints.size != 2)
    fail(LOOM_STATUS_INVALID_ARGUMENT,
         "cpu %s: the generator argument must be an int list {seed, offset} (value kind %d)", op,
         v.kind);
  return {static_cast<uint64_t>(v.u.ints.data[0]), static_cast<uint64_t>(v.u.ints.data[1])};
}

// Writes sample(block) to every element of `out`, element i drawing block
// philox_for_element(seed, offset, i).
template <class T, class Sample>
void fill_random(const LoomTensorDesc& out, GeneratorState g, Sample sample) {
  T* po = plugin::data_ptr<T>(out);
  const int64_t* strides[1] = {out.strides};
  plugin::StridedIter<1> it;
  const int64_t n = it.init(out.ndim, out.shape, strides);
  const int64_t so = it.inner_stride(0);
  parallel_for(n, kRandomGrain, [&](int64_t s, int64_t e) {
    uint64_t index = static_cast<uint64_t>(s);
    it.for_each_run(s, e, [&](const int64_t* off, int64_t len) {
      T* o = po + off[0];
      for (int64_t i = 0; i < len; ++i, ++index)
        o[i * so] = sample(plugin::philox_for_element(g.seed, g.offset, index));
    });
  });
}

template <bool Normal>
void random_kernel(const LoomKernelCall& c, const char* op) {
  expect_arity(c, op, 1, 1);
  const GeneratorState g = generator_state(c, op);
  const double a = plugin::value_float(c, 0);  // from / mean
  const double b = plugin::value_float(c, 1);  // to / std
  const LoomTensorDesc& out = c.outputs[0];
  dispatch<DTypes::Floating>(out.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double>) {
      fill_random<T>(out, g, [a, b](const plugin::Philox4x32& blk) {
        return Normal ? plugin::normal_sample_f64(blk, a, b) : plugin::uniform_sample_f64(blk, a, b);
      });
    } else {  // 16- and 32-bit floats compute in float, then round
      const float fa = static_cast<float>(a), fb = static_cast<float>(b);
      fill_random<T>(out, g, [fa, fb](const plugin::Philox4x32& blk) {
        return T(Normal ? plugin::normal_sample_f32(blk, fa, fb)
                        : plugin::uniform_sample_f32(blk, fa, fb));
      });
    }
  });
}

}  // namespace

void uniform_(const LoomKernelCall& c) { random_kernel<false>(c, "uniform_"); }
void normal_(const LoomKernelCall& c) { random_kernel<true>(c, "normal_"); }

// dropout (dropout_kernels.cpp) draws its mask from the same Philox stream.
void register_random_kernels(plugin::Registrar& r) {
  using plugin::kernel;
  r.kernel("uniform_", "cpu", kernel<uniform_>, kFloatingMask);
  r.kernel("normal_", "cpu", kernel<normal_>, kFloatingMask);
  r.kernel("dropout", "cpu", kernel<dropout>, kFloatingMask);
}

}  // namespace loom::cpu
