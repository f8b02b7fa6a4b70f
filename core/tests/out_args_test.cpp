// out= variants: resize, dtype rules, direct writes vs copies, aliasing an
// input, views as out, composites and the sim device.
#include <catch2/catch.hpp>
#include <loom/loom.h>

using loom::DType;
using loom::Tensor;

TEST_CASE("out= writes the result into the given tensor and returns it", "[out]") {
  auto a = loom::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = loom::from_vector<float>({10, 20, 30}, {3});
  auto out = loom::empty({2, 3});
  const void* data = out.data_ptr();
  Tensor& r = loom::add_out(out, a, b, 2);
  CHECK(&r == &out);
  CHECK(out.data_ptr() == data);  // right shape and dtype: written in place
  CHECK(out.to_vector<float>() == std::vector<float>{21, 42, 63, 24, 45, 66});

  // Wrong shape: resized (torch resizes too).
  auto small = loom::empty({0});
  loom::mul_out(small, a, b);
  CHECK(small.sizes() == loom::IntArrayRef({2, 3}));
  CHECK(small.to_vector<float>() == std::vector<float>{10, 40, 90, 40, 100, 180});
  auto big = loom::zeros({100});
  loom::sub_out(big, a, b);
  CHECK(big.sizes() == loom::IntArrayRef({2, 3}));
  CHECK(big.to_vector<float>() == std::vector<float>{-9, -18, -27, -6, -15, -24});

  // A wider dtype takes the result cast.
  auto wide = loom::empty({2, 3}, DType::Float64);
  loom::exp_out(wide, loom::zeros({2, 3}));
  CHECK(wide.dtype() == DType::Float64);
  CHECK(wide.to_vector<double>() == std::vector<double>(6, 1.0));
  auto flags = loom::empty({3}, DType::Float32);
  loom::lt_out(flags, b, loom::from_vector<float>({15, 15, 15}, {3}));
  CHECK(flags.to_vector<float>() == std::vector<float>{1, 0, 0});
}

TEST_CASE("out= dtype and device rules", "[out]") {
  auto a = loom::ones({2, 3});
  auto ints = loom::empty({2, 3}, DType::Int64);
  CHECK_THROWS_WITH(loom::add_out(ints, a, a),
                    Catch::Contains("add: result type float32 can't be cast to the desired output type int64"));
  auto bools = loom::empty({2, 3}, DType::Bool);
  CHECK_THROWS_WITH(loom::mul_out(bools, loom::ones({2}, DType::Int32), loom::ones({2}, DType::Int32)),
                    Catch::Contains("can't be cast to the desired output type bool"));
  auto on_sim = loom::empty({2, 3}, DType::Float32, loom::Device("sim:0"));
  CHECK_THROWS_WITH(loom::add_out(on_sim, a, a), Catch::Contains("expected out= tensor on cpu"));
}

TEST_CASE("out= through a view writes into the base; out aliasing an input", "[out]") {
  auto base = loom::zeros({3, 4});
  auto col = base.select(1, 2);  // strided view
  loom::add_out(col, loom::ones({3}), loom::full({3}, 2.0));
  CHECK(base.select(1, 2).contiguous().to_vector<float>() == std::vector<float>{3, 3, 3});
  CHECK(base.sum().item<float>() == 9.0f);

  // Matrix product into a transposed view (kernel expects a fresh layout:
  // goes through a temporary) and into one of its own inputs.
  auto m = loom::from_vector<float>({1, 2, 3, 4}, {2, 2});
  auto target = loom::zeros({2, 2});
  auto tt = target.t();
  loom::mm_out(tt, m, m);  // [[7, 10], [15, 22]]
  CHECK(target.to_vector<float>() == std::vector<float>{7, 15, 10, 22});
  loom::matmul_out(m, m, m);
  CHECK(m.to_vector<float>() == std::vector<float>{7, 10, 15, 22});

  auto x = loom::from_vector<float>({1, 2}, {2});
  loom::add_out(x, x, x);  // elementwise onto an input
  CHECK(x.to_vector<float>() == std::vector<float>{2, 4});
}

TEST_CASE("out= for reductions, scans, composites and other devices", "[out]") {
  auto a = loom::arange(6, DType::Float32).view({2, 3});
  auto s = loom::empty({0});
  loom::sum_out(s, a, {1});
  CHECK(s.to_vector<float>() == std::vector<float>{3, 12});
  loom::mean_out(s, a, {0}, true);
  CHECK(s.sizes() == loom::IntArrayRef({1, 3}));
  CHECK(s.to_vector<float>() == std::vector<float>{1.5f, 2.5f, 3.5f});
  auto c = loom::empty({2, 3}, DType::Float64);
  loom::cumsum_out(c, a, 1);
  CHECK(c.to_vector<double>() == std::vector<double>{0, 1, 3, 3, 7, 12});

  auto self = loom::ones({2});
  auto r = loom::empty({2, 2});
  loom::addmm_out(r, self, loom::eye(2), loom::eye(2), 1, 3);  // composite
  CHECK(r.to_vector<float>() == std::vector<float>{4, 1, 1, 4});

  const loom::Device sim("sim:0");
  auto sa = loom::ones({3}, DType::Float32, sim);
  auto so = loom::empty({0}, DType::Float32, sim);
  loom::add_out(so, sa, sa);  // sim kernel
  CHECK(so.to(loom::cpu_device()).to_vector<float>() == std::vector<float>{2, 2, 2});
  loom::div_out(so, sa, loom::full({3}, 4.0).to(sim));  // sim has no div: CPU fallback
  CHECK(so.device() == sim);
  CHECK(so.to(loom::cpu_device()).to_vector<float>() == std::vector<float>{0.25f, 0.25f, 0.25f});
}
