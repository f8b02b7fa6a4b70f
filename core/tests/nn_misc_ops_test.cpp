// dropout, embedding and pad end to end: values against naive loops and
// torch 1.13 literals, PyTorch's argument rules and errors, and sim (pad's
// composite, embedding through the CPU fallback).
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;

namespace {
std::vector<double> vals(const loom::Tensor& t) { return t.to_vector<double>(); }

// Naive pad of a 3-D tensor over its last two dims (torch pad order: last dim
// first). Mode 0 constant, 1 reflect, 2 replicate.
std::vector<double> naive_pad3(const loom::Tensor& a, int64_t l, int64_t r, int64_t t, int64_t b,
                               int mode, double value = 0) {
  const auto v = vals(a.contiguous());
  const int64_t C = a.size(0), H = a.size(1), W = a.size(2);
  const int64_t OH = H + t + b, OW = W + l + r;
  auto map = [&](int64_t o, int64_t before, int64_t n) -> int64_t {
    int64_t i = o - before;
    if (i >= 0 && i < n) return i;
    if (mode == 0) return -1;
    if (mode == 1) return i < 0 ? -i : 2 * (n - 1) - i;
    return i < 0 ? 0 : n - 1;
  };
  std::vector<double> out;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t x = 0; x < OW; ++x) {
        const int64_t sy = map(y, t, H), sx = map(x, l, W);
        out.push_back(sy < 0 || sx < 0 ? value : v[static_cast<size_t>((c * H + sy) * W + sx)]);
      }
  return out;
}
}  // namespace

TEST_CASE("dropout: scaling, seeding, p = 0 and 1, training off", "[nn_misc]") {
  auto x = loom::ones({1000, 100});
  loom::manual_seed(7);
  auto a = loom::dropout(x, 0.3);
  loom::manual_seed(7);
  auto b = loom::dropout(x, 0.3);
  CHECK(vals(a) == vals(b));  // reproducible under manual_seed
  auto c = loom::dropout(x, 0.3);
  CHECK(vals(a) != vals(c));  // and fresh numbers on the next call
  const auto av = vals(a);
  int64_t kept = 0;
  for (double e : av) {
    const bool ok = e == 0.0 || std::abs(e - 1.0 / 0.7) < 1e-6;
    if (!ok) FAIL("dropout produced " << e);
    kept += e != 0.0;
  }
  // 100000 Bernoulli(0.7) draws: 5 standard deviations is ~725.
  CHECK(std::abs(kept - 70000) < 725);
  CHECK(a.dtype() == DType::Float32);
  CHECK(a.sizes() == x.sizes());

  CHECK(loom::dropout(x, 0.3, false).is_same(x));
  CHECK(loom::dropout(x, 0.0).is_same(x));
  CHECK(loom::sum(loom::dropout(x, 1.0)).item<float>() == 0.0f);
  auto d = loom::dropout(x.to(DType::Float64), 0.5);
  CHECK(d.dtype() == DType::Float64);
  CHECK(loom::dropout(x.to(DType::BFloat16), 0.5).dtype() == DType::BFloat16);
  // In place: same memory, same mask as the out-of-place form.
  auto y = loom::ones({50, 20});
  auto y0 = y;
  loom::manual_seed(3);
  auto ref = loom::dropout(y, 0.4);
  loom::manual_seed(3);
  loom::dropout_(y, 0.4);
  CHECK(y.is_same(y0));
  CHECK(vals(y) == vals(ref));

  CHECK_THROWS_WITH(loom::dropout(x, 1.5), Catch::Contains("dropout: probability has to be between 0 and 1, but got 1.5"));
  CHECK_THROWS_WITH(loom::dropout(x, -0.1, false), Catch::Contains("between 0 and 1, but got -0.1"));
  CHECK_THROWS_WITH(loom::dropout_(x, 2.0), Catch::Contains("between 0 and 1"));
  CHECK_THROWS_WITH(loom::dropout(loom::ones({3}, DType::Int64), 0.5),
                    Catch::Contains("dropout: expected a floating point input, got int64"));
}

TEST_CASE("embedding gathers rows for int64 and int32 indices of any shape", "[nn_misc]") {
  auto w = loom::arange(12, DType::Float32).view({4, 3});
  auto idx = loom::from_vector<int64_t>({3, 0, 1, 3}, {2, 2});
  auto e = loom::embedding(w, idx);
  CHECK(e.sizes() == loom::IntArrayRef({2, 2, 3}));
  CHECK(vals(e) == std::vector<double>{9, 10, 11, 0, 1, 2, 3, 4, 5, 9, 10, 11});
  CHECK(vals(loom::embedding(w, idx.to(DType::Int32))) == vals(e));
  // Transposed weight and indices (any strides), int64 weight.
  auto wt = loom::arange(12).view({3, 4}).t();  // [4, 3], strides (1, 4)
  auto e2 = loom::embedding(wt, idx.t());
  CHECK(e2.dtype() == DType::Int64);
  CHECK(e2.to_vector<int64_t>() == std::vector<int64_t>{3, 7, 11, 1, 5, 9, 0, 4, 8, 3, 7, 11});
  // 0-d index, empty indices, padding_idx does not change the forward result.
  CHECK(vals(loom::embedding(w, loom::full({}, 2, DType::Int64))) == std::vector<double>{6, 7, 8});
  CHECK(loom::embedding(w, loom::zeros({0, 5}, DType::Int64)).sizes() == loom::IntArrayRef({0, 5, 3}));
  CHECK(vals(loom::embedding(w, idx, 3)) == vals(e));
  CHECK(vals(loom::embedding(w, idx, -1)) == vals(e));

  CHECK_THROWS_WITH(loom::embedding(w, loom::from_vector<int64_t>({1, 4}, {2})),
                    Catch::Contains("embedding: index 4 is out of range for num_embeddings 4"));
  CHECK_THROWS_WITH(loom::embedding(w, loom::from_vector<int32_t>({-1}, {1})),
                    Catch::Contains("index -1 is out of range for num_embeddings 4"));
  CHECK_THROWS_WITH(loom::embedding(w, loom::ones({2}, DType::Float32)),
                    Catch::Contains("embedding: expected 'indices' of dtype int64 or int32, got float32"));
  CHECK_THROWS_WITH(loom::embedding(w, loom::ones({2}, DType::Int16)), Catch::Contains("got int16"));
  CHECK_THROWS_WITH(loom::embedding(loom::ones({3}), idx),
                    Catch::Contains("embedding: 'weight' must be 2-D [num_embeddings, embedding_dim], got 1-D"));
  CHECK_THROWS_WITH(loom::embedding(w, idx, 4), Catch::Contains("embedding: padding_idx 4 must be within num_embeddings 4"));
  CHECK_THROWS_WITH(loom::embedding(w, idx, -5), Catch::Contains("padding_idx -5"));
}

TEST_CASE("pad: constant with any dims and negative pads", "[nn_misc]") {
  auto x = loom::arange(6, DType::Float32).view({1, 2, 3});
  auto p = loom::pad(x, {1, 2});
  CHECK(p.sizes() == loom::IntArrayRef({1, 2, 6}));
  CHECK(vals(p) == std::vector<double>{0, 0, 1, 2, 0, 0, 0, 3, 4, 5, 0, 0});
  CHECK(vals(loom::pad(x, {-1, -1})) == std::vector<double>{1, 4});
  CHECK(loom::pad(x, {-2, -1}).sizes() == loom::IntArrayRef({1, 2, 0}));
  CHECK(vals(loom::pad(x, {0, 0, 1, 0, 0, 1}, "constant", 9.0)) ==
        std::vector<double>{9, 9, 9, 0, 1, 2, 3, 4, 5, 9, 9, 9, 9, 9, 9, 9, 9, 9});
  // torch 1.13: pad(arange(24).view(2,3,4), (-1,2,1,-1), value=7).
  auto a = loom::arange(24, DType::Float32).view({2, 3, 4});
  CHECK(vals(loom::pad(a, {-1, 2, 1, -1}, "constant", 7.0)) ==
        std::vector<double>{7, 7, 7, 7, 7, 1, 2, 3, 7, 7, 5, 6, 7, 7, 7,
                            7, 7, 7, 7, 7, 13, 14, 15, 7, 7, 17, 18, 19, 7, 7});
  CHECK(vals(loom::pad(a, {1, 1, 2, 0}, "constant", 0.5)) == naive_pad3(a, 1, 1, 2, 0, 0, 0.5));
  // Integer input, fractional value: truncated like a cast (torch gives 2).
  CHECK(loom::pad(loom::arange(3), {1, 1}, "constant", 2.5).to_vector<int64_t>() ==
        std::vector<int64_t>{2, 0, 1, 2, 2});
  CHECK(loom::pad(loom::ones({2}, DType::Bool), {1, 0}).to_vector<bool>() == std::vector<bool>{false, true, true});
  // 0-d input with no padding: a copy.
  auto s = loom::full({}, 3.0);
  CHECK(loom::pad(s, {}).item<float>() == 3.0f);
  CHECK(!loom::pad(s, {}).is_same(s));
}

TEST_CASE("pad: reflect and replicate against torch and a naive loop", "[nn_misc]") {
  auto x = loom::arange(6, DType::Float32).view({1, 2, 3});
  CHECK(vals(loom::pad(x, {2, 2}, "reflect")) ==
        std::vector<double>{2, 1, 0, 1, 2, 1, 0, 5, 4, 3, 4, 5, 4, 3});
  CHECK(vals(loom::pad(x, {2, -1}, "reflect")) == std::vector<double>{2, 1, 0, 1, 5, 4, 3, 4});
  CHECK(vals(loom::pad(x, {-1, 0}, "replicate")) == std::vector<double>{1, 2, 4, 5});
  auto a = loom::arange(24, DType::Float32).view({2, 3, 4});
  CHECK(vals(loom::pad(a, {1, 2, 2, 1}, "reflect")) == naive_pad3(a, 1, 2, 2, 1, 1));
  CHECK(vals(loom::pad(a, {2, 1, 1, 2}, "replicate")) == naive_pad3(a, 2, 1, 1, 2, 2));
  CHECK(vals(loom::pad(a, {3, 3, 2, 2}, "replicate")) == naive_pad3(a, 3, 3, 2, 2, 2));
  // Strided input (a transpose) and other dtypes.
  auto at = loom::arange(24, DType::Float64).view({2, 4, 3}).transpose(1, 2);
  CHECK(vals(loom::pad(at, {1, 2, 2, 1}, "reflect")) == naive_pad3(at, 1, 2, 2, 1, 1));
  auto ai = loom::arange(24).view({2, 3, 4});
  CHECK(vals(loom::pad(ai, {0, 3, 1, 1}, "replicate")) == naive_pad3(ai, 0, 3, 1, 1, 2));
  CHECK(loom::pad(ai, {0, 3, 1, 1}, "replicate").dtype() == DType::Int64);
  auto ah = a.to(DType::Float16);
  CHECK(vals(loom::pad(ah, {1, 1, 1, 1}, "reflect")) == naive_pad3(a, 1, 1, 1, 1, 1));
  // 3 padded dims of a 4-D (unbatched) input: torch 1.13 pads every dim.
  // torch 1.13: pad(arange(24).view(1,2,3,4), (1,1,1,0,1,1), 'reflect').
  CHECK(vals(loom::pad(a.view({1, 2, 3, 4}), {1, 1, 1, 0, 1, 1}, "reflect")) ==
        std::vector<double>{17, 16, 17, 18, 19, 18, 13, 12, 13, 14, 15, 14, 17, 16, 17, 18, 19, 18,
                            21, 20, 21, 22, 23, 22, 5,  4,  5,  6,  7,  6,  1,  0,  1,  2,  3,  2,
                            5,  4,  5,  6,  7,  6,  9,  8,  9,  10, 11, 10, 17, 16, 17, 18, 19, 18,
                            13, 12, 13, 14, 15, 14, 17, 16, 17, 18, 19, 18, 21, 20, 21, 22, 23, 22,
                            5,  4,  5,  6,  7,  6,  1,  0,  1,  2,  3,  2,  5,  4,  5,  6,  7,  6,
                            9,  8,  9,  10, 11, 10});
  auto v = loom::ones({2, 3, 4, 5});
  CHECK(loom::pad(v, {1, 1, 1, 1, 1, 1}, "reflect").sizes() == loom::IntArrayRef({2, 5, 6, 7}));
  CHECK(loom::pad(loom::ones({0, 2, 3}), {1, 1}, "reflect").sizes() == loom::IntArrayRef({0, 2, 5}));
}

TEST_CASE("pad errors follow PyTorch's rules", "[nn_misc]") {
  auto x = loom::arange(6, DType::Float32).view({1, 2, 3});
  CHECK_THROWS_WITH(loom::pad(x, {1}), Catch::Contains("pad: padding length must be divisible by 2, got 1"));
  CHECK_THROWS_WITH(loom::pad(x, {1, 1, 1, 1, 1, 1, 1, 1}), Catch::Contains("pad: padding length too large"));
  CHECK_THROWS_WITH(loom::pad(x, {-2, -2}), Catch::Contains("gives a negative size -1"));
  CHECK_THROWS_WITH(loom::pad(x, {3, 0}, "reflect"),
                    Catch::Contains("reflect padding size should be less than the corresponding input "
                                    "dimension, but got padding (3, 0) at dimension 2 of input [1, 2, 3]"));
  CHECK_THROWS_WITH(loom::pad(x, {-3, 0}, "replicate"), Catch::Contains("output size 0"));
  CHECK_THROWS_WITH(loom::pad(x, {1, 1, 1, 1, 1, 1}, "reflect"),
                    Catch::Contains("pads the last 1, 2 or 3 dims") && Catch::Contains("3 padded dims of a 3-D input"));
  CHECK_THROWS_WITH(loom::pad(loom::ones({3}), {1, 1}, "replicate"), Catch::Contains("1 padded dims of a 1-D input"));
  CHECK_THROWS_WITH(loom::pad(loom::ones({2, 2, 2, 2, 2, 2}), {1, 1}, "replicate"), Catch::Contains("of a 6-D input"));
  CHECK_THROWS_WITH(loom::pad(x, {1, 1}, "circular"), Catch::Contains("pad: unrecognised padding mode 'circular'"));
  CHECK_THROWS_WITH(loom::pad(x, {1, 1}, "reflect", 2.0), Catch::Contains("pad: mode 'reflect' doesn't take a value argument"));
  CHECK_THROWS_WITH(loom::pad(loom::ones({1, 0, 3}), {1, 1, 1, 1}, "reflect"),
                    Catch::Contains("pad: mode 'reflect' needs a non-empty dimension 1 in input [1, 0, 3]"));
  CHECK_THROWS_WITH(loom::pad(loom::ones({1, 3, 0}), {1, 1}, "replicate"),
                    Catch::Contains("pad: mode 'replicate' needs a non-empty dimension 2 in input [1, 3, 0]"));
}

TEST_CASE("pad and embedding on sim: the composite and the CPU fallback", "[nn_misc]") {
  loom::Device sim("sim");
  auto a = loom::arange(24, DType::Float32).view({2, 3, 4});
  auto as = a.to(sim);
  for (const char* mode : {"constant", "reflect", "replicate"}) {
    INFO(mode);
    auto ps = loom::pad(as, {1, 2, 2, 1}, mode);
    CHECK(ps.device() == sim);
    CHECK(vals(ps.cpu()) == vals(loom::pad(a, {1, 2, 2, 1}, mode)));
    auto cs = loom::pad(as, {-1, 2, 1, -1}, mode);
    CHECK(vals(cs.cpu()) == vals(loom::pad(a, {-1, 2, 1, -1}, mode)));
  }
  CHECK(vals(loom::pad(as, {2, -1}, "reflect").cpu()) == vals(loom::pad(a, {2, -1}, "reflect")));
  auto w = loom::arange(12, DType::Float32).view({4, 3});
  auto idx = loom::from_vector<int64_t>({3, 0}, {2});
  auto es = loom::embedding(w.to(sim), idx.to(sim));
  CHECK(es.device() == sim);
  CHECK(vals(es.cpu()) == std::vector<double>{9, 10, 11, 0, 1, 2});
  // dropout: sim runs the composite (uniform_, lt, where), cpu the fused
  // kernel; both draw the same numbers, so the results are identical.
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
    INFO("dtype " << loom::name(dt));
    auto x = loom::randn({37, 29}).to(dt);
    loom::manual_seed(5);
    auto ds = loom::dropout(x.to(sim), 0.35);
    loom::manual_seed(5);
    auto dc = loom::dropout(x, 0.35);
    CHECK(ds.device() == sim);
    const auto a = vals(ds.cpu()), b = vals(dc);
    int64_t differ = 0, first = -1;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i] && differ++ == 0) first = static_cast<int64_t>(i);
    INFO("first difference at " << first << ": " << (first >= 0 ? a[first] : 0) << " vs "
                                << (first >= 0 ? b[first] : 0));
    CHECK(differ == 0);
  }
}
