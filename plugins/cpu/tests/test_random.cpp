// Philox known answers, and uniform_/normal_: the exact documented
// formula per element, determinism in (seed, offset), independence from
// strides, and rough moments.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <loom/plugin/philox.hpp>

#include <cmath>

using namespace loom_test;
namespace lp = loom::plugin;

namespace {

std::vector<LoomValue> rng_args(double a, double b, int64_t seed, int64_t offset) {
  return {float_value(a), float_value(b), int_list_value({seed, offset})};
}

std::vector<long double> values_of(const Tensor& t) {
  std::vector<long double> v;
  for_each_index(t.shape, [&](const std::vector<int64_t>& i) { v.push_back(get(t, i)); });
  return v;
}

}  // namespace

TEST_CASE("Philox4x32-10 known-answer vectors (Random123)", "[random]") {
  auto run_kat = [](lp::Philox4x32 ctr, uint32_t k0, uint32_t k1, lp::Philox4x32 want) {
    const lp::Philox4x32 got = lp::philox4x32_10(ctr, k0, k1);
    for (int i = 0; i < 4; ++i) CHECK(got.w[i] == want.w[i]);
  };
  run_kat({{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}});
  run_kat({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
          {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}});
  run_kat({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
          {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}});
}

TEST_CASE("uniform_ and normal_ follow the documented formula", "[random]") {
  const uint64_t seed = 0x123456789abcdefULL, offset = 1000;
  Tensor f = make(LOOM_DTYPE_FLOAT32, {37});
  run("uniform_", {f.desc()}, {f.desc()}, rng_args(-2, 3, static_cast<int64_t>(seed), offset));
  Tensor d = make(LOOM_DTYPE_FLOAT64, {37});
  run("uniform_", {d.desc()}, {d.desc()}, rng_args(-2, 3, static_cast<int64_t>(seed), offset));
  Tensor n = make(LOOM_DTYPE_FLOAT32, {37});
  run("normal_", {n.desc()}, {n.desc()}, rng_args(1, 2, static_cast<int64_t>(seed), offset));
  Tensor nd = make(LOOM_DTYPE_FLOAT64, {37});
  run("normal_", {nd.desc()}, {nd.desc()}, rng_args(1, 2, static_cast<int64_t>(seed), offset));
  Tensor h = make(LOOM_DTYPE_FLOAT16, {37});
  run("uniform_", {h.desc()}, {h.desc()}, rng_args(-2, 3, static_cast<int64_t>(seed), offset));
  for (int64_t i = 0; i < 37; ++i) {
    const lp::Philox4x32 blk = lp::philox_for_element(seed, offset, static_cast<uint64_t>(i));
    const uint32_t w0 = blk.w[0], w1 = blk.w[1], w2 = blk.w[2], w3 = blk.w[3];
    // Written out from docs/kernel_conventions.md, not from philox.hpp's helpers.
    const float u = static_cast<float>(w0 >> 8) * std::ldexp(1.0f, -24);
    CHECK(get(f, {i}) == -2.0f + 5.0f * u);
    CHECK(get(h, {i}) == static_cast<float>(lp::Half(-2.0f + 5.0f * u)));
    const double u53 = static_cast<double>(((static_cast<uint64_t>(w0) << 32) | w1) >> 11) * std::ldexp(1.0, -53);
    CHECK(get(d, {i}) == -2.0 + 5.0 * u53);
    const float u1 = static_cast<float>((w0 >> 8) + 1) * std::ldexp(1.0f, -24);
    const float u2 = static_cast<float>(w1 >> 8) * std::ldexp(1.0f, -24);
    const float z = 1.0f + 2.0f * (std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853071795864769f * u2));
    CHECK(std::fabs(get(n, {i}) - z) <= 1e-5L * (1 + std::fabs(z)));
    const double v1 = static_cast<double>((((static_cast<uint64_t>(w0) << 32) | w1) >> 11) + 1) * std::ldexp(1.0, -53);
    const double v2 = static_cast<double>(((static_cast<uint64_t>(w2) << 32) | w3) >> 11) * std::ldexp(1.0, -53);
    const double zd = 1.0 + 2.0 * (std::sqrt(-2.0 * std::log(v1)) * std::cos(6.283185307179586 * v2));
    CHECK(std::fabs(get(nd, {i}) - zd) <= 1e-12L * (1 + std::fabs(zd)));
  }
}

TEST_CASE("random ops are deterministic in (seed, offset) and ignore strides", "[random]") {
  for (const char* op : {"uniform_", "normal_"}) {
    for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT16}) {
      INFO(op << " " << lp::dtype_name(dt));
      // Large enough for the parallel path.
      Tensor a = make(dt, {300, 200}), b = make(dt, {300, 200});
      run(op, {a.desc()}, {a.desc()}, rng_args(0, 1, 42, 7));
      run(op, {b.desc()}, {b.desc()}, rng_args(0, 1, 42, 7));
      CHECK(values_of(a) == values_of(b));
      // Another seed or offset gives other numbers; offset shifts the stream.
      run(op, {b.desc()}, {b.desc()}, rng_args(0, 1, 43, 7));
      CHECK(values_of(a) != values_of(b));
      Tensor c = make(dt, {300, 200});
      run(op, {c.desc()}, {c.desc()}, rng_args(0, 1, 42, 8));
      const auto va = values_of(a), vc = values_of(c);
      CHECK(std::equal(vc.begin(), vc.end() - 1, va.begin() + 1));
      // A transposed view gets the same values in its own logical order.
      Tensor t0 = make(dt, {200, 300});
      const Tensor t = transpose(t0, 0, 1);  // logical [300, 200]
      run(op, {t.desc()}, {t.desc()}, rng_args(0, 1, 42, 7));
      CHECK(values_of(t) == va);
      // A sliced view with an offset leaves the rest alone.
      Tensor big = make(dt, {10, 10});
      const Tensor win = slice(slice(big, 0, 2, 5), 1, 1, 4, 2);
      run(op, {win.desc()}, {win.desc()}, rng_args(0, 1, 42, 7));
      Tensor ref = make(dt, {5, 4});
      run(op, {ref.desc()}, {ref.desc()}, rng_args(0, 1, 42, 7));
      CHECK(values_of(win) == values_of(ref));
      long double untouched = 0;
      for_each_index(big.shape, [&](const std::vector<int64_t>& i) {
        const bool inside = i[0] >= 2 && i[0] < 7 && i[1] >= 1 && i[1] < 9 && (i[1] - 1) % 2 == 0;
        if (!inside) untouched += std::fabs(get(big, i));
      });
      CHECK(untouched == 0);
    }
  }
}

TEST_CASE("random ops have roughly the right moments", "[random]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16}) {
    INFO(lp::dtype_name(dt));
    Tensor t = make(dt, {200000});
    run("uniform_", {t.desc()}, {t.desc()}, rng_args(2, 5, 1234, 0));
    long double s = 0, s2 = 0, lo = 1e9, hi = -1e9;
    for (long double v : values_of(t)) {
      s += v;
      s2 += v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const long double n = 200000, mean = s / n, var = s2 / n - mean * mean;
    CHECK(std::fabs(mean - 3.5L) < 0.02L);
    CHECK(std::fabs(std::sqrt(var) - std::sqrt(0.75L)) < 0.02L);
    CHECK(lo >= 2);
    CHECK(hi <= 5);  // float16 may round up to `to`
    run("normal_", {t.desc()}, {t.desc()}, rng_args(1, 2, 99, 5));
    s = s2 = 0;
    for (long double v : values_of(t)) {
      CHECK(std::isfinite(v));
      s += v;
      s2 += v * v;
    }
    const long double nm = s / n, nv = s2 / n - nm * nm;
    CHECK(std::fabs(nm - 1) < 0.03L);
    CHECK(std::fabs(std::sqrt(nv) - 2) < 0.03L);
  }
}
