// The nn family end to end: softmax/log_softmax against a naive reference
// in every layout and floating dtype, layer/group/batch norm, nll_loss and
// cross_entropy (expected values from torch 1.13, pasted as literals),
// scaled_dot_product_attention against a naive loop, and the errors.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>
#include <limits>
#include <vector>

using loom::DType;
using loom::Tensor;

namespace {

std::vector<double> vals(const Tensor& t) { return t.to(DType::Float64).to_vector<double>(); }

void check_close(const Tensor& got, const std::vector<double>& want, double tol) {
  const std::vector<double> g = vals(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    CHECK(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])));
  }
}

// softmax / log_softmax of a contiguous float64 copy along dim, by loops.
std::vector<double> naive_softmax(const Tensor& x, int64_t dim, bool log) {
  const Tensor c = x.to(DType::Float64).contiguous();
  const std::vector<double> v = c.to_vector<double>();
  const int64_t nd = c.dim();
  if (dim < 0) dim += nd;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= c.size(d);
  for (int64_t d = dim + 1; d < nd; ++d) inner *= c.size(d);
  const int64_t n = c.size(dim);
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; ++k) m = std::max(m, v[(o * n + k) * inner + i]);
      for (int64_t k = 0; k < n; ++k) s += std::exp(v[(o * n + k) * inner + i] - m);
      for (int64_t k = 0; k < n; ++k) {
        const double e = v[(o * n + k) * inner + i] - m;
        out[(o * n + k) * inner + i] = log ? e - std::log(s) : std::exp(e) / s;
      }
    }
  return out;
}

double tol_of(DType t) {
  switch (t) {
    case DType::Float16: return 2e-3;
    case DType::BFloat16: return 1.6e-2;
    case DType::Float32: return 2e-6;
    default: return 1e-13;
  }
}

}  // namespace

TEST_CASE("softmax and log_softmax match a naive reference", "[nn]") {
  loom::manual_seed(7);
  const Tensor base = loom::randn({3, 5, 37}) * 4.0;
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const Tensor x = base.to(dt);
    for (int64_t dim : {0, 1, 2, -1, -2}) {
      for (bool log : {false, true}) {
        INFO("dtype " << loom::name(dt) << " dim " << dim << " log " << log);
        const Tensor y = log ? loom::log_softmax(x, dim) : loom::softmax(x, dim);
        CHECK(y.dtype() == dt);
        CHECK(y.sizes() == x.sizes());
        check_close(y, naive_softmax(x, dim, log), tol_of(dt));
        // A strided view (transposed) goes through the gather path.
        const Tensor xt = x.transpose(0, 2);
        const Tensor yt = log ? loom::log_softmax(xt, dim) : loom::softmax(xt, dim);
        check_close(yt, naive_softmax(xt, dim, log), tol_of(dt));
      }
    }
  }
}

TEST_CASE("softmax: long rows, many columns, stability and special values", "[nn]") {
  loom::manual_seed(3);
  const Tensor x = loom::randn({4, 1000}) * 10.0 + 500.0;  // large offsets: needs the max shift
  check_close(loom::softmax(x, 1), naive_softmax(x, 1, false), 2e-6);
  check_close(loom::log_softmax(x, 0), naive_softmax(x, 0, true), 2e-6);
  const Tensor wide = loom::randn({2, 3, 200});  // columns layout with several tiles and a tail
  check_close(loom::softmax(wide, 1), naive_softmax(wide, 1, false), 2e-6);
  check_close(loom::log_softmax(wide, 0), naive_softmax(wide, 0, true), 2e-6);
  // Rows sum to one.
  check_close(loom::sum(loom::softmax(x, 1), loom::IntArrayRef{1}), {1, 1, 1, 1}, 1e-6);

  const double inf = std::numeric_limits<double>::infinity();
  const Tensor masked = loom::from_vector<float>({1, -INFINITY, 2, -INFINITY}, {4});
  const std::vector<double> sm = vals(loom::softmax(masked, 0));
  CHECK(sm[1] == 0.0);
  CHECK(sm[3] == 0.0);
  CHECK(sm[0] == Approx(1 / (1 + std::exp(1.0))));
  CHECK(vals(loom::log_softmax(masked, 0))[1] == -inf);
  // A NaN poisons its row only; an all -inf row is NaN (0/0), as PyTorch.
  const Tensor nan_row = loom::from_vector<float>({1, NAN, 2, 0, 1, 2, -INFINITY, -INFINITY, -INFINITY}, {3, 3});
  const std::vector<double> r = vals(loom::softmax(nan_row, 1));
  for (int i = 0; i < 3; ++i) CHECK(std::isnan(r[i]));
  CHECK(r[3] + r[4] + r[5] == Approx(1.0));
  for (int i = 6; i < 9; ++i) CHECK(std::isnan(r[i]));
}

TEST_CASE("softmax: dtype argument, 0-d, empty, errors", "[nn]") {
  const Tensor ints = loom::arange(4);
  const Tensor s = loom::softmax(ints, 0, DType::Float64);
  CHECK(s.dtype() == DType::Float64);
  check_close(s, naive_softmax(ints.to(DType::Float64), 0, false), 1e-14);
  check_close(loom::log_softmax(loom::from_vector<int64_t>({1, 2}, {2}), 0, DType::Float64),
              {-1.3132616875182228, -0.31326168751822286}, 1e-14);  // torch 1.13
  CHECK(loom::softmax(loom::from_vector<float>({3.0f}, {}), 0).item<float>() == 1.0f);
  CHECK(loom::log_softmax(loom::from_vector<float>({3.0f}, {}), -1).item<float>() == 0.0f);
  CHECK(loom::softmax(loom::zeros({0, 3}), 1).sizes() == loom::IntArrayRef({0, 3}));
  CHECK(loom::softmax(loom::zeros({2, 0}), 1).numel() == 0);
  CHECK_THROWS_WITH(loom::softmax(ints, 0), Catch::Contains("softmax: expected a floating point input"));
  CHECK_THROWS_WITH(loom::log_softmax(loom::zeros({2, 3}), 2),
                    Catch::Contains("log_softmax: dimension 2 is out of range"));
  CHECK_THROWS_WITH(loom::softmax(loom::zeros({2}), 0, DType::Int32), Catch::Contains("got int32"));
}

TEST_CASE("layer_norm", "[nn]") {
  const Tensor x = loom::from_vector<double>({0.5, -1.0, 2.0, 0.1, 1.5, 0.3, -0.7, 0.0, -2.0, 1.0, 0.5, 3.0}, {3, 4});
  const Tensor w = loom::from_vector<double>({1, 2, 3, 4}, {4});
  const Tensor b = loom::from_vector<double>({0.5, 0, 0, -0.5}, {4});
  const std::vector<double> want = {0.5930480182, -2.6053445106, 4.4663048753,  -1.6165762188,
                                    2.0410511919, 0.0629000486,  -3.679652846,  -1.8838010703,
                                    -0.9739087299, 0.42111678,   -0.21055839,   4.8341458797};  // torch 1.13
  check_close(loom::layer_norm(x, {4}, w, b), want, 1e-9);
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    const Tensor y = loom::layer_norm(x.to(dt), {4}, w.to(dt), b.to(dt));
    CHECK(y.dtype() == dt);
    check_close(y, want, dt == DType::Float32 ? 1e-6 : dt == DType::Float16 ? 4e-3 : 3e-2);
  }
  // Over two trailing dims, no affine, on a strided input: against mean/var.
  loom::manual_seed(5);
  const Tensor r = loom::randn({6, 3, 5}).transpose(0, 2);  // [5, 3, 6], not contiguous
  const Tensor m = loom::mean(r, loom::IntArrayRef{1, 2}, true);
  const Tensor v = loom::var(r, loom::IntArrayRef{1, 2}, 0, true);
  check_close(loom::layer_norm(r, {3, 6}, {}, {}, 1e-3), vals((r - m) / loom::sqrt(v + 1e-3)), 1e-5);

  CHECK_THROWS_WITH(loom::layer_norm(x, {3}),
                    Catch::Contains("layer_norm: given normalized_shape=[3], expected input with shape [*, 3]"));
  CHECK_THROWS_WITH(loom::layer_norm(x, {}), Catch::Contains("at least one element"));
  CHECK_THROWS_WITH(loom::layer_norm(x, {4}, loom::ones({3}, DType::Float64)),
                    Catch::Contains("expected weight of shape normalized_shape=[4], got [3]"));
  CHECK_THROWS_WITH(loom::layer_norm(x, {4}, w.to(DType::Float32)),
                    Catch::Contains("expected weight of dtype float64"));
  CHECK_THROWS_WITH(loom::layer_norm(loom::arange(4), {4}), Catch::Contains("expected a floating point input"));
}

TEST_CASE("group_norm and batch_norm", "[nn]") {
  const std::vector<double> data = {0.5, -1.0, 2.0, 0.1, 1.5, 0.3, -0.7, 0.0, -2.0, 1.0, 0.5, 3.0};
  const Tensor x6 = loom::from_vector<double>(data, {2, 6, 1});
  const Tensor gn = loom::group_norm(x6, 3, loom::arange(0, 6, 1, DType::Float64), loom::ones({6}, DType::Float64));
  check_close(gn, {1.0, 8.8888e-06, 2.9999889198, -1.9999833796, 4.9999444456, -3.999930557, 1.0, 1.9999591862,
                   -0.9999955556, 3.9999933334, -2.9999872001, 5.9999840001},
              1e-8);  // torch 1.13
  CHECK(loom::group_norm(x6.to(DType::Float16), 2).dtype() == DType::Float16);
  CHECK_THROWS_WITH(loom::group_norm(x6, 4), Catch::Contains("divisible by num_groups"));
  CHECK_THROWS_WITH(loom::group_norm(x6, 3, loom::ones({5}, DType::Float64)),
                    Catch::Contains("group_norm: weight should contain 6 elements not 5"));

  const Tensor x = loom::from_vector<double>(data, {2, 2, 3});
  Tensor rm = loom::from_vector<double>({0.1, -0.2}, {2});
  Tensor rv = loom::from_vector<double>({1.0, 2.0}, {2});
  const Tensor w = loom::from_vector<double>({1.5, 0.5}, {2});
  const Tensor b = loom::from_vector<double>({0.1, -0.3}, {2});
  check_close(loom::batch_norm(x, rm, rv, w, b, true, 0.3),
              {0.9344527498, -0.8536602855, 2.7225657852, -0.7927274975, -0.0791221563, -0.6907838773,
               -0.4960376785, 0.3384150714, -2.0457356424, -0.3339812067, -0.5888402572, 0.685454995},
              1e-9);
  check_close(rm, {0.01, 0.18}, 1e-12);  // updated in place
  check_close(rv, {1.27, 1.7464}, 1e-12);  // unbiased batch variance blended in
  check_close(loom::batch_norm(x, rm, rv, w, b, false, 0.1, 1e-3),
              {0.7519504115, -1.2438161544, 2.7477169775, -0.3302596448, 0.199284139, -0.2546105328,
               -0.8446628412, 0.0866948896, -2.5743271983, 0.0101613591, -0.1789614208, 0.7666524788},
              1e-9);
  check_close(rm, {0.01, 0.18}, 1e-12);  // eval leaves them alone
  // Training without running stats just normalises with the batch's.
  const Tensor y = loom::batch_norm(x.to(DType::Float32), {}, {}, {}, {}, true);
  check_close(loom::mean(y, loom::IntArrayRef{0, 2}), {0, 0}, 1e-6);
  CHECK_THROWS_WITH(loom::batch_norm(x, {}, {}, {}, {}, false),
                    Catch::Contains("running_mean must be defined in evaluation mode"));
  CHECK_THROWS_WITH(loom::batch_norm(loom::ones({1, 3}), {}, {}, {}, {}, true),
                    Catch::Contains("expected more than 1 value per channel when training"));
  CHECK_THROWS_WITH(loom::batch_norm(x, loom::zeros({4}, DType::Float64), rv, {}, {}, true),
                    Catch::Contains("running_mean should contain 2 elements not 4"));
}

TEST_CASE("nll_loss and cross_entropy match torch", "[nn]") {
  const Tensor x = loom::from_vector<double>({0.5, -1.0, 2.0, 0.1, 1.5, 0.3, -0.7, 0.0, -2.0, 1.0, 0.5, 3.0}, {3, 4});
  const Tensor t = loom::from_vector<int64_t>({2, 0, 3}, {3});
  const Tensor w = loom::from_vector<double>({1.0, 2.0, 0.5, 1.5}, {4});
  const Tensor lp = loom::log_softmax(x, 1);
  // Expected values: torch 1.13, float64.
  check_close(loom::nll_loss(lp, t), {0.348793395783}, 1e-11);
  check_close(loom::nll_loss(lp, t, {}, "sum"), {1.046380187349}, 1e-11);
  check_close(loom::nll_loss(lp, t, {}, "none"), {0.352405938103, 0.491720801566, 0.202253447679}, 1e-11);
  check_close(loom::nll_loss(lp, t, w), {0.323767980712}, 1e-11);
  check_close(loom::nll_loss(lp, t, {}, "mean", 0), {0.277329692891}, 1e-11);
  check_close(loom::nll_loss(lp, t, w, "mean", 0), {0.239791570285}, 1e-11);
  check_close(loom::cross_entropy(x, t), {0.348793395783}, 1e-11);
  check_close(loom::cross_entropy(x, t, {}, -100, "mean", 0.1), {0.522126729116}, 1e-11);
  check_close(loom::cross_entropy(x, t, w, -100, "mean", 0.2), {0.785379400182}, 1e-11);
  check_close(loom::cross_entropy(x, t, w, 3, "mean", 0.2), {1.033580467608}, 1e-11);
  check_close(loom::cross_entropy(x, t, {}, 3, "none", 0.2), {0.672405938103, 0.736720801566, 0.0}, 1e-11);
  const Tensor pt = loom::from_vector<double>({0.1, 0.2, 0.3, 0.4, 1, 0, 0, 0, 0.25, 0.25, 0.25, 0.25}, {3, 4});
  check_close(loom::cross_entropy(x, pt), {1.643793395783}, 1e-11);
  check_close(loom::cross_entropy(x, pt, w, -100, "sum", 0.1), {6.403338053834}, 1e-11);
  check_close(loom::cross_entropy(x, pt, {}, -100, "none"), {1.862405938103, 0.491720801566, 2.577253447679}, 1e-11);
  // (N, C, d) inputs and a 1-d input with a 0-d target.
  const Tensor x3 = x.reshape({2, 3, 2});
  const Tensor t3 = loom::from_vector<int64_t>({0, 2, 1, 1}, {2, 2});
  const Tensor ce3 = loom::cross_entropy(x3, t3, {}, -100, "none");
  CHECK(ce3.sizes() == loom::IntArrayRef({2, 2}));
  check_close(ce3, {2.104130605337, 0.737767972637, 2.824456919895, 2.169846019556}, 1e-11);
  check_close(loom::cross_entropy(x3, t3, w.narrow(0, 0, 3)), {2.265749176465}, 1e-11);
  const Tensor ce1 = loom::cross_entropy(x.select(0, 0), loom::from_vector<int64_t>({3}, {}));
  CHECK(ce1.dim() == 0);
  check_close(ce1, {2.252405938103}, 1e-11);
  // float32 and 16-bit inputs keep their dtype.
  CHECK(loom::cross_entropy(x.to(DType::Float32), t).dtype() == DType::Float32);
  check_close(loom::cross_entropy(x.to(DType::BFloat16), t), {0.348793395783}, 2e-2);
  // Every target ignored: mean is 0/0.
  CHECK(std::isnan(loom::nll_loss(lp, loom::full({3}, -100, DType::Int64)).item<double>()));
}

TEST_CASE("nll_loss and cross_entropy errors", "[nn]") {
  const Tensor x = loom::zeros({3, 4});
  const Tensor t = loom::from_vector<int64_t>({2, 0, 3}, {3});
  CHECK_THROWS_WITH(loom::nll_loss(x, loom::from_vector<int64_t>({2, 7, 3}, {3})),
                    Catch::Contains("nll_loss: target 7 is out of bounds for 4 classes"));
  CHECK_THROWS_WITH(loom::cross_entropy(x, loom::from_vector<int64_t>({-1, 0, 3}, {3})),
                    Catch::Contains("cross_entropy: target -1 is out of bounds for 4 classes"));
  CHECK_NOTHROW(loom::nll_loss(x, loom::from_vector<int64_t>({-5, 0, 3}, {3}), {}, "mean", -5));
  CHECK_THROWS_WITH(loom::nll_loss(x, t.to(DType::Int32)), Catch::Contains("expected target of dtype int64"));
  CHECK_THROWS_WITH(loom::nll_loss(x, loom::zeros({2}, DType::Int64)),
                    Catch::Contains("expected input batch_size (3) to match target batch_size (2)"));
  CHECK_THROWS_WITH(loom::nll_loss(loom::zeros({3, 4, 5}), loom::zeros({3, 4}, DType::Int64)),
                    Catch::Contains("expected target of shape [3, 5]"));
  CHECK_THROWS_WITH(loom::nll_loss(x, t, loom::ones({3})), Catch::Contains("for all 4 classes or no classes"));
  CHECK_THROWS_WITH(loom::nll_loss(x, t, {}, "avg"), Catch::Contains("reduction must be 'none', 'mean' or 'sum'"));
  CHECK_THROWS_WITH(loom::nll_loss(loom::zeros({3, 4}, DType::Int64), t), Catch::Contains("floating point input"));
  CHECK_THROWS_WITH(loom::cross_entropy(x, loom::zeros({3, 4}), {}, 1),
                    Catch::Contains("ignore_index is not supported for floating point target"));
  CHECK_THROWS_WITH(loom::cross_entropy(x, t, {}, -100, "mean", 1.5), Catch::Contains("label_smoothing must be between"));
  CHECK_THROWS_WITH(loom::cross_entropy(x, loom::zeros({3, 4}, DType::Int64)),
                    Catch::Contains("expected a floating point target for class probabilities"));
}

TEST_CASE("scaled_dot_product_attention", "[nn]") {
  loom::manual_seed(11);
  const int64_t B = 2, L = 3, S = 4, E = 5, Ev = 2;
  const Tensor q = loom::randn({B, L, E}, DType::Float64), k = loom::randn({B, S, E}, DType::Float64),
               v = loom::randn({B, S, Ev}, DType::Float64);
  const Tensor fmask = loom::randn({L, S}, DType::Float64);
  const Tensor bmask = loom::from_vector<int64_t>({1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0}, {L, S}).to(DType::Bool);
  const std::vector<double> qv = vals(q), kv = vals(k), vv = vals(v), fm = vals(fmask);
  const std::vector<double> bm = vals(bmask);
  // mode 0: none, 1: float mask, 2: bool mask, 3: causal; scale sc.
  auto naive = [&](int mode, double sc) {
    std::vector<double> out(B * L * Ev, 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        double m = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double d = 0;
          for (int64_t e = 0; e < E; ++e) d += qv[(b * L + i) * E + e] * kv[(b * S + j) * E + e];
          d *= sc;
          if (mode == 1) d += fm[i * S + j];
          if ((mode == 2 && bm[i * S + j] == 0) || (mode == 3 && j > i)) d = -INFINITY;
          s[j] = d;
          m = std::max(m, d);
        }
        double z = 0;
        for (double& x : s) z += (x = std::exp(x - m));
        for (int64_t j = 0; j < S; ++j)
          for (int64_t e = 0; e < Ev; ++e) out[(b * L + i) * Ev + e] += s[j] / z * vv[(b * S + j) * Ev + e];
      }
    return out;
  };
  const double sc = 1 / std::sqrt(5.0);
  const Tensor y = loom::scaled_dot_product_attention(q, k, v);
  CHECK(y.sizes() == loom::IntArrayRef({B, L, Ev}));
  check_close(y, naive(0, sc), 1e-12);
  check_close(loom::scaled_dot_product_attention(q, k, v, fmask), naive(1, sc), 1e-12);
  check_close(loom::scaled_dot_product_attention(q, k, v, bmask), naive(2, sc), 1e-12);
  check_close(loom::scaled_dot_product_attention(q, k, v, {}, 0.0, true, 0.5), naive(3, 0.5), 1e-12);
  // Batch dims broadcast ([1, S, E] keys); float32 works too.
  const Tensor yb = loom::scaled_dot_product_attention(q.to(DType::Float32), k.narrow(0, 0, 1).to(DType::Float32),
                                                       v.narrow(0, 0, 1).to(DType::Float32));
  CHECK(yb.sizes() == loom::IntArrayRef({B, L, Ev}));
  // Dropout 1 drops everything; dropout 0.5 keeps the shape.
  check_close(loom::scaled_dot_product_attention(q, k, v, {}, 1.0), std::vector<double>(B * L * Ev, 0.0), 0);
  CHECK(loom::scaled_dot_product_attention(q, k, v, {}, 0.5).sizes() == loom::IntArrayRef({B, L, Ev}));

  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q, loom::randn({B, S, 4}, DType::Float64), v),
                    Catch::Contains("query and key must have the same embedding size"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q, k, loom::randn({B, 3, Ev}, DType::Float64)),
                    Catch::Contains("key and value must have the same sequence length"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q, k, v, bmask, 0.0, true),
                    Catch::Contains("attn_mask must not be given when is_causal is true"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q, k, v, loom::zeros({L, 3}, DType::Float64)),
                    Catch::Contains("does not broadcast to the scores' shape"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q, k.to(DType::Float32), v),
                    Catch::Contains("same dtype"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q.select(0, 0).select(0, 0), k, v),
                    Catch::Contains("at least 2 dims"));
  CHECK_THROWS_WITH(loom::scaled_dot_product_attention(q, k, v, {}, 1.5), Catch::Contains("dropout_p must be in [0, 1]"));
}

TEST_CASE("nn ops run on sim through their composites", "[nn]") {
  // sim has no softmax or layer_norm kernel: the composites run there, on
  // sim's own add/mul and the CPU fallback for the rest, and match the CPU
  // kernels. The composite-only ops run the same way.
  const loom::FallbackPolicy saved = loom::fallback_policy();
  loom::set_fallback_policy(loom::FallbackPolicy::Allow);
  loom::Device sim("sim");
  loom::manual_seed(21);
  const Tensor x = loom::randn({3, 4, 5});
  const Tensor xs = x.to(sim);
  const Tensor s = loom::softmax(xs, 1);
  CHECK(s.device() == sim);
  check_close(s.cpu(), vals(loom::softmax(x, 1)), 1e-6);
  check_close(loom::log_softmax(xs, -1).cpu(), vals(loom::log_softmax(x, -1)), 1e-6);
  CHECK(loom::fallback_count("softmax", "sim") == 0);  // the composite, not the fallback
  const Tensor sh = loom::softmax(xs.to(DType::BFloat16), 2);
  CHECK(sh.dtype() == DType::BFloat16);
  check_close(sh.cpu(), vals(loom::softmax(x, 2)), 1e-2);
  const Tensor w = loom::randn({5}), b = loom::randn({5});
  check_close(loom::layer_norm(xs, {5}, w.to(sim), b.to(sim)).cpu(), vals(loom::layer_norm(x, {5}, w, b)), 1e-5);
  check_close(loom::group_norm(xs, 2).cpu(), vals(loom::group_norm(x, 2)), 1e-6);
  const Tensor t = loom::from_vector<int64_t>({1, 0, 3, 2, 2, 3, 0, 1, 3, 3, 1, 0, 2, 2, 2}, {3, 5});
  check_close(loom::cross_entropy(xs, t.to(sim)).cpu(), vals(loom::cross_entropy(x, t)), 1e-6);
  check_close(loom::scaled_dot_product_attention(xs, xs, xs).cpu(), vals(loom::scaled_dot_product_attention(x, x, x)),
              1e-6);
  loom::set_fallback_policy(saved);
}
