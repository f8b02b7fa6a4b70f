// sum over dim sets: every dtype, keepdim-form output, transposed input,
// empty and 0-d tensors, large inner/outer/all reductions (parallel and
// chunked paths), accuracy of float32 accumulation.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>

using namespace loom_test;

namespace {

std::vector<int64_t> keepdim_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out = shape;
  if (dims.empty()) {
    for (auto& s : out) s = 1;
  }
  for (int64_t d : dims) out[static_cast<size_t>(d)] = 1;
  return out;
}

// Reference sum in long double (integers wrapped to the dtype at the end).
void check_sum(const Tensor& in, const std::vector<int64_t>& dims, bool float_tol_by_abs = true) {
  const int32_t dt = in.dtype;
  const std::vector<int64_t> oshape = keepdim_shape(in.shape, dims);
  Tensor out = make(dt, oshape);
  fill_pattern(out, 99);  // garbage that must be overwritten
  std::vector<long double> want(static_cast<size_t>(out.numel()), 0), mag(want.size(), 0);
  const std::vector<int64_t> ostr = contiguous_strides(oshape);
  for_each_index(in.shape, [&](const std::vector<int64_t>& idx) {
    size_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      o += static_cast<size_t>((oshape[d] == 1 ? 0 : idx[d]) * ostr[d]);
    const long double v = get(in, idx);
    want[o] += v;
    mag[o] += std::fabs(v);
  });
  run("sum", {in.desc()}, {out.desc()}, {int_list_value(dims)});
  size_t i = 0;
  for_each_index(oshape, [&](const std::vector<int64_t>& idx) {
    long double w = want[i];
    const long double m = mag[i++];
    const long double got = get(out, idx);
    bool ok;
    if (dt == LOOM_DTYPE_BOOL) {
      ok = got == (w != 0 ? 1 : 0);
    } else if (!is_floating(dt)) {
      const int64_t wi = static_cast<int64_t>(w);
      switch (dt) {
        case LOOM_DTYPE_UINT8: w = static_cast<uint8_t>(wi); break;
        case LOOM_DTYPE_INT8: w = static_cast<int8_t>(wi); break;
        case LOOM_DTYPE_INT16: w = static_cast<int16_t>(wi); break;
        case LOOM_DTYPE_INT32: w = static_cast<int32_t>(wi); break;
        default: break;
      }
      ok = got == w;
    } else {
      // One rounding into the dtype, plus float32 block accumulation.
      const long double tol = eps_of(dt) * std::fabs(w) + (float_tol_by_abs ? 1e-6L * m : 0);
      ok = std::fabs(got - w) <= tol + 1e-30L;
    }
    if (!ok)
      FAIL_CHECK("sum " << loom::plugin::dtype_name(dt) << " output " << i - 1 << ": got "
                        << static_cast<double>(got) << ", want " << static_cast<double>(w));
  });
}

}  // namespace

TEST_CASE("sum over dim sets, every dtype", "[sum]") {
  const std::vector<std::vector<int64_t>> dim_sets{{0}, {1}, {2}, {0, 2}, {0, 1}, {1, 2}, {0, 1, 2}, {}};
  for (int32_t dt : all_dtypes()) {
    INFO(loom::plugin::dtype_name(dt));
    Tensor a = make(dt, {3, 4, 5});
    fill_pattern(a, 1);
    for (const auto& dims : dim_sets) check_sum(a, dims);
    // Non-contiguous: a [5,4,3] tensor transposed to [3,4,5], and a slice.
    Tensor b0 = make(dt, {5, 4, 3});
    fill_pattern(b0, 2);
    const Tensor b = transpose(b0, 0, 2);
    for (const auto& dims : dim_sets) check_sum(b, dims);
    Tensor c0 = make(dt, {6, 9});
    fill_pattern(c0, 3);
    const Tensor c = slice(slice(c0, 0, 1, 4), 1, 1, 4, 2);
    for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {0, 1}}) check_sum(c, dims);
    // Broadcast input (stride 0) and size-1 dims.
    Tensor r = make(dt, {1, 5});
    fill_pattern(r, 4);
    const Tensor rb = expand(r, {7, 5});
    for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {0, 1}}) check_sum(rb, dims);
    Tensor ones = make(dt, {1, 3, 1});
    fill_pattern(ones, 5);
    for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {2}, {0, 2}, {1}}) check_sum(ones, dims);
  }
}

TEST_CASE("sum of empty and 0-d tensors", "[sum]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT64, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BOOL}) {
    Tensor e = make(dt, {0, 3});
    check_sum(e, {0});     // [1,3] of zeros
    check_sum(e, {1});     // [0,1]: nothing
    check_sum(e, {0, 1});  // [1,1] = 0
    Tensor s = make(dt, {});
    fill_pattern(s, 6);
    check_sum(s, {});  // 0-d: itself
  }
}

TEST_CASE("sum of large tensors: inner, outer and full reductions", "[sum]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT32, LOOM_DTYPE_BFLOAT16}) {
    INFO(loom::plugin::dtype_name(dt));
    Tensor a = make(dt, {300, 700});
    fill_pattern(a, 7);
    check_sum(a, {0});
    check_sum(a, {1});
    check_sum(a, {0, 1});
    check_sum(transpose(a, 0, 1), {0});
    Tensor tall = make(dt, {200000, 3});
    fill_pattern(tall, 8);
    check_sum(tall, {0});
    check_sum(tall, {1});
    check_sum(tall, {0, 1});
    Tensor mixed = make(dt, {40, 300, 12});
    fill_pattern(mixed, 9);
    check_sum(mixed, {0, 2});
    check_sum(mixed, {1});
  }
}

TEST_CASE("float32 sum is accurate over many elements", "[sum]") {
  // 2^22 copies of 0.1f: naive float accumulation is off by percents.
  const int64_t n = int64_t{1} << 22;
  Tensor a = make(LOOM_DTYPE_FLOAT32, {n});
  run("fill_", {a.desc()}, {a.desc()}, {float_value(0.1)});
  Tensor o = make(LOOM_DTYPE_FLOAT32, {1});
  run("sum", {a.desc()}, {o.desc()}, {int_list_value({0})});
  const long double want = static_cast<long double>(n) * static_cast<float>(0.1);
  CHECK(std::fabs(get(o, {0}) - want) <= 1e-6L * want);
  // Deterministic: the same call gives the same bits.
  Tensor o2 = make(LOOM_DTYPE_FLOAT32, {1});
  run("sum", {a.desc()}, {o2.desc()}, {int_list_value({0})});
  CHECK(get(o, {0}) == get(o2, {0}));
}
