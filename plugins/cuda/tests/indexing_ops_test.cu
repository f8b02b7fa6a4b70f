// Host tests of the CUDA indexing and shape kernels' index math
// (kernels/indexing_ops.cuh), built by nvcc as a host program: no kernel
// runs. Expected values are worked out here by hand or with std:: math, to
// the CPU plugin's rules (plugins/cpu/indexing_kernels.cpp, shape_kernels.cpp,
// pad_kernels.cpp, indexing_masked.cpp).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/indexing_ops.cuh"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace loom::cuda;
using namespace loom::cuda::indexing;

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr float kInff = std::numeric_limits<float>::infinity();

template <class T>
ScatterAdd<T> plain_add() {
  return {add_t<T>(1), false};
}

}  // namespace

TEST_CASE("in_bounds takes [0, size) and rejects negatives", "[indexing]") {
  CHECK(in_bounds(0, 3));
  CHECK(in_bounds(2, 3));
  CHECK_FALSE(in_bounds(3, 3));
  CHECK_FALSE(in_bounds(-1, 3));
  CHECK_FALSE(in_bounds(std::numeric_limits<int64_t>::min(), 3));
  CHECK_FALSE(in_bounds(0, 0));
}

TEST_CASE("scatter_add_ on floats adds once, alpha scales first", "[indexing]") {
  CHECK(plain_add<float>()(1.5f, 2.25f) == 3.75f);
  CHECK(plain_add<double>()(0.1, 0.2) == 0.1 + 0.2);
  const ScatterAdd<float> twice{2.0f, true};
  CHECK(twice(1.0f, 3.0f) == 7.0f);
  CHECK(std::isnan(plain_add<float>()(kInff, -kInff)));
  CHECK(std::isnan(plain_add<float>()(1.0f, kNaNf)));
  // -0 + -0 stays -0; 0 + -0 is +0.
  CHECK(std::signbit(plain_add<float>()(-0.0f, -0.0f)));
  CHECK_FALSE(std::signbit(plain_add<float>()(0.0f, -0.0f)));
}

TEST_CASE("scatter_add_ on 16-bit floats adds in float and rounds once", "[indexing]") {
  // 2048 + 1 is not a float16 (spacing 2 there): ties to even give 2048;
  // 2048 + 3 = 2051 rounds to 2052.
  const __half a = __float2half(2048.0f);
  CHECK(__half2float(plain_add<__half>()(a, __float2half(1.0f))) == 2048.0f);
  CHECK(__half2float(plain_add<__half>()(a, __float2half(3.0f))) == 2052.0f);
  // alpha 0.5 on 3: 2048 + 1.5 = 2049.5 in float, nearest float16 2050.
  const ScatterAdd<__half> half_alpha{0.5f, true};
  CHECK(__half2float(half_alpha(a, __float2half(3.0f))) == 2050.0f);
  const __nv_bfloat16 b = __float2bfloat16(256.0f);  // bfloat16 spacing at 256 is 2
  CHECK(__bfloat162float(plain_add<__nv_bfloat16>()(b, __float2bfloat16(1.0f))) == 256.0f);
  CHECK(__bfloat162float(plain_add<__nv_bfloat16>()(b, __float2bfloat16(3.0f))) == 260.0f);
}

TEST_CASE("scatter_add_ on integers wraps, alpha multiplies modulo 2^bits", "[indexing]") {
  CHECK(plain_add<int8_t>()(int8_t{127}, int8_t{1}) == int8_t{-128});
  CHECK(plain_add<uint8_t>()(uint8_t{255}, uint8_t{2}) == uint8_t{1});
  CHECK(plain_add<int16_t>()(int16_t{-32768}, int16_t{-1}) == int16_t{32767});
  CHECK(plain_add<int32_t>()(std::numeric_limits<int32_t>::max(), 1) == std::numeric_limits<int32_t>::min());
  CHECK(plain_add<int64_t>()(std::numeric_limits<int64_t>::max(), int64_t{1}) ==
        std::numeric_limits<int64_t>::min());
  // alpha -3 reaches an unsigned add type as 2^32 - 3: 10 + (-3) * 4 = -2.
  const ScatterAdd<int32_t> minus3{static_cast<uint32_t>(-3), true};
  CHECK(minus3(10, 4) == -2);
  const ScatterAdd<int8_t> by100{100u, true};
  CHECK(by100(int8_t{0}, int8_t{3}) == static_cast<int8_t>(300 - 256));
}

TEST_CASE("scatter_add_ on bool is an or; alpha false adds nothing", "[indexing]") {
  CHECK(plain_add<bool>()(false, true));
  CHECK(plain_add<bool>()(true, true));
  CHECK_FALSE(plain_add<bool>()(false, false));
  const ScatterAdd<bool> none{false, true};
  CHECK_FALSE(none(false, true));
  CHECK(none(true, true));
}

TEST_CASE("flip and roll map output to input indices", "[shape]") {
  // flip of [a b c d]: out[0] = in[3].
  CHECK(flip_source(0, 4) == 3);
  CHECK(flip_source(3, 4) == 0);
  // roll by 1 of [a b c d] is [d a b c]: out[0] = in[3], out[1] = in[0].
  const std::vector<int64_t> expect = {3, 0, 1, 2};
  for (int64_t o = 0; o < 4; ++o) CHECK(roll_source(o, 1, 4) == expect[static_cast<size_t>(o)]);
  for (int64_t o = 0; o < 5; ++o) CHECK(roll_source(o, 0, 5) == o);
}

TEST_CASE("tril keeps j <= i + k, triu keeps j >= i + k", "[shape]") {
  CHECK(triangle_keeps(true, 1, 1, 0));
  CHECK_FALSE(triangle_keeps(true, 1, 2, 0));
  CHECK(triangle_keeps(true, 0, 2, 2));
  CHECK_FALSE(triangle_keeps(true, 2, 0, -3));
  CHECK(triangle_keeps(false, 1, 1, 0));
  CHECK_FALSE(triangle_keeps(false, 1, 0, 0));
  CHECK(triangle_keeps(false, 3, 0, -3));
  CHECK_FALSE(triangle_keeps(false, 0, 1, 2));
}

TEST_CASE("pad maps output indices for each mode", "[pad]") {
  // Input [a b c] (n = 3) padded by 2 before.
  const std::vector<int64_t> constant = {-1, -1, 0, 1, 2, -1};
  const std::vector<int64_t> reflect = {2, 1, 0, 1, 2, 1};
  const std::vector<int64_t> replicate = {0, 0, 0, 1, 2, 2};
  for (int64_t o = 0; o < 6; ++o) {
    CHECK(pad_source(PadMode::Constant, o, 2, 3) == constant[static_cast<size_t>(o)]);
    CHECK(pad_source(PadMode::Reflect, o, 2, 3) == reflect[static_cast<size_t>(o)]);
    CHECK(pad_source(PadMode::Replicate, o, 2, 3) == replicate[static_cast<size_t>(o)]);
  }
  // A negative pad crops: output 0 reads input 1.
  CHECK(pad_source(PadMode::Constant, 0, -1, 3) == 1);
  CHECK(pad_source(PadMode::Reflect, 1, -1, 3) == 2);
}

TEST_CASE("nonzero counts NaN but not -0", "[masked]") {
  CHECK(is_nonzero(kNaNf));
  CHECK_FALSE(is_nonzero(-0.0f));
  CHECK_FALSE(is_nonzero(-0.0));
  CHECK(is_nonzero(1e-45f));
  CHECK_FALSE(is_nonzero(__float2half(-0.0f)));
  CHECK(is_nonzero(__float2half(kNaNf)));
  CHECK(is_nonzero(__float2bfloat16(-2.0f)));
  CHECK_FALSE(is_nonzero(int8_t{0}));
  CHECK(is_nonzero(int64_t{-1}));
  CHECK(is_nonzero(true));
  CHECK_FALSE(is_nonzero(false));
}

TEST_CASE("unravel gives row-major coordinates", "[masked]") {
  const int64_t shape[3] = {2, 3, 4};
  int64_t coord[3];
  unravel(0, 3, shape, coord);
  CHECK((coord[0] == 0 && coord[1] == 0 && coord[2] == 0));
  unravel(23, 3, shape, coord);
  CHECK((coord[0] == 1 && coord[1] == 2 && coord[2] == 3));
  unravel(13, 3, shape, coord);  // 13 = 1*12 + 0*4 + 1
  CHECK((coord[0] == 1 && coord[1] == 0 && coord[2] == 1));
}

TEST_CASE("sort keys order numbers, put NaN above all and -0 with +0", "[sort]") {
  const std::vector<float> xs = {-kInff, -3.5f, -1e-30f, 0.0f, 1e-30f, 2.0f, kInff};
  for (size_t i = 0; i + 1 < xs.size(); ++i) CHECK(sort_key(xs[i]) < sort_key(xs[i + 1]));
  CHECK(sort_key(kInff) < sort_key(kNaNf));
  CHECK(sort_key(-kNaNf) == sort_key(kNaNf));
  CHECK(sort_key(-0.0f) == sort_key(0.0f));
  CHECK(sort_key(-0.0) == sort_key(0.0));
  CHECK(sort_key(-1.0) < sort_key(-0.5));
  CHECK(sort_key(std::numeric_limits<double>::infinity()) < sort_key(std::nan("")));
  // 16-bit floats sort as float.
  CHECK(sort_key(__float2half(-2.0f)) == sort_key(-2.0f));
  CHECK(sort_key(__float2bfloat16(65504.0f)) < sort_key(__float2bfloat16(kNaNf)));
  CHECK(sort_key(__float2half(-0.0f)) == sort_key(__float2half(0.0f)));
}

TEST_CASE("sort keys of integers keep signed order within their bits", "[sort]") {
  CHECK(sort_key(int8_t{-128}) < sort_key(int8_t{-1}));
  CHECK(sort_key(int8_t{-1}) < sort_key(int8_t{0}));
  CHECK(sort_key(int8_t{127}) < (uint64_t{1} << sort_key_bits<int8_t>));
  CHECK(sort_key(int64_t{-1}) < sort_key(int64_t{1}));
  CHECK(sort_key(std::numeric_limits<int64_t>::min()) == 0);
  CHECK(sort_key(std::numeric_limits<int64_t>::max()) == ~uint64_t{0});
  CHECK(sort_key(uint8_t{200}) > sort_key(uint8_t{100}));
  CHECK(sort_key(int32_t{-5}) < sort_key(int32_t{3}));
  CHECK(sort_key(false) < sort_key(true));
  CHECK(sort_key_bits<__half> == 32);
  CHECK(sort_key_bits<int16_t> == 16);
}
