// The CPU kernels through the whole dispatcher, against plain loops.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;

namespace {
std::vector<double> naive_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 int64_t M, int64_t K, int64_t N) {
  std::vector<double> c(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) c[i * N + j] += a[i * K + k] * b[k * N + j];
  return c;
}
}  // namespace

TEST_CASE("add, sub, mul, div broadcast like PyTorch") {
  auto a = loom::arange(6, DType::Float32).view({2, 3});
  auto b = loom::from_vector<float>({10, 20, 30}, {3});
  CHECK((a + b).to_vector<float>() == std::vector<float>{10, 21, 32, 13, 24, 35});
  CHECK((a - b).to_vector<float>() == std::vector<float>{-10, -19, -28, -7, -16, -25});
  CHECK(loom::add(a, b, 2).to_vector<float>() == std::vector<float>{20, 41, 62, 23, 44, 65});
  auto col = loom::from_vector<float>({1, 2}, {2, 1});
  CHECK((a * col).to_vector<float>() == std::vector<float>{0, 1, 2, 6, 8, 10});
  auto q = (a / col).to_vector<float>();
  CHECK(q[4] == Approx(2.0f));
  CHECK((a + b).sizes() == loom::IntArrayRef({2, 3}));

  // Non-contiguous operands and an integer/float mix.
  auto at = a.t();  // 3x2
  auto ints = loom::from_vector<int32_t>({1, 2}, {2});
  auto r = at + ints;
  CHECK(r.dtype() == DType::Float32);
  CHECK(r.to_vector<float>() == std::vector<float>{1, 5, 2, 6, 3, 7});
  CHECK((loom::from_vector<int32_t>({7, -7}, {2}) / 2).to_vector<float>() == std::vector<float>{3.5f, -3.5f});
}

TEST_CASE("unary ops: neg, relu, exp over dtypes") {
  auto a = loom::from_vector<float>({-1.5f, 0.0f, 2.0f}, {3});
  CHECK((-a).to_vector<float>() == std::vector<float>{1.5f, -0.0f, -2.0f});
  CHECK(a.relu().to_vector<float>() == std::vector<float>{0, 0, 2});
  auto e = a.exp().to_vector<float>();
  CHECK(e[0] == Approx(std::exp(-1.5f)));
  CHECK(e[2] == Approx(std::exp(2.0f)));
  auto i = loom::from_vector<int64_t>({-3, 4}, {2});
  CHECK(i.relu().to_vector<int64_t>() == std::vector<int64_t>{0, 4});
  CHECK(i.exp().dtype() == DType::Float32);
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64, DType::Int8, DType::Int16}) {
    INFO(loom::name(t));
    auto x = a.to(t);
    CHECK((-x).to(DType::Float32).to_vector<float>()[2] == -2.0f);
    CHECK((x + x).to(DType::Float32).to_vector<float>()[2] == 4.0f);
  }
}

TEST_CASE("sum over all dims and over some dims, with keepdim and dtype") {
  auto a = loom::arange(24, DType::Float32).view({2, 3, 4});
  CHECK(a.sum().item<float>() == 276.0f);
  CHECK(a.sum().dim() == 0);
  auto s1 = a.sum({1});
  CHECK(s1.sizes() == loom::IntArrayRef({2, 4}));
  CHECK(s1.to_vector<float>() == std::vector<float>{12, 15, 18, 21, 48, 51, 54, 57});
  auto s02 = loom::sum(a, {0, -1}, true);
  CHECK(s02.sizes() == loom::IntArrayRef({1, 3, 1}));
  CHECK(s02.to_vector<float>() == std::vector<float>{60, 92, 124});
  CHECK_THROWS_WITH(a.t(), Catch::Contains("<= 2 dimensions"));
  CHECK(loom::arange(5).sum().dtype() == DType::Int64);
  CHECK(loom::ones({3}, DType::Bool).sum().item<int64_t>() == 3);
  CHECK(loom::sum(loom::ones({4}), {}, false, DType::Float64).dtype() == DType::Float64);
  CHECK(loom::zeros({0, 3}).sum({0}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(loom::full({}, 5.0).sum().item<float>() == 5.0f);
  // A transposed input reduces the same values.
  auto m = loom::arange(6, DType::Float64).view({2, 3});
  CHECK(m.t().sum({0}).to_vector<double>() == std::vector<double>{3, 12});
}

TEST_CASE("matmul: 2-D, 1-D, batched with broadcasting, transposed operands") {
  loom::manual_seed(1);
  for (auto [M, K, N] : {std::tuple{1, 1, 1}, {3, 4, 5}, {17, 33, 9}, {64, 64, 64}}) {
    auto a = loom::rand({M, K}, DType::Float64);
    auto b = loom::rand({K, N}, DType::Float64);
    auto want = naive_matmul(a.to_vector<double>(), b.to_vector<double>(), M, K, N);
    for (DType t : {DType::Float32, DType::Float64}) {
      INFO(M << "x" << K << "x" << N << " " << loom::name(t));
      auto got = a.to(t).matmul(b.to(t)).to_vector<double>();
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-4));
    }
  }
  auto a = loom::arange(6, DType::Float32).view({2, 3});
  auto v = loom::from_vector<float>({1, 1, 1}, {3});
  CHECK(a.matmul(v).to_vector<float>() == std::vector<float>{3, 12});
  CHECK(v.matmul(a.t()).to_vector<float>() == std::vector<float>{3, 12});
  CHECK(v.matmul(v).dim() == 0);
  CHECK(v.matmul(v).item<float>() == 3.0f);
  CHECK(a.t().matmul(a).to_vector<float>() ==
        std::vector<float>{9, 12, 15, 12, 17, 22, 15, 22, 29});

  auto batch = loom::arange(12, DType::Float32).view({2, 2, 3});  // [2, 2, 3]
  auto w = loom::arange(6, DType::Float32).view({3, 2});          // broadcast over batch
  auto r = batch.matmul(w);
  CHECK(r.sizes() == loom::IntArrayRef({2, 2, 2}));
  CHECK(r.to_vector<float>() == std::vector<float>{10, 13, 28, 40, 46, 67, 64, 94});
  auto ints = loom::arange(4).view({2, 2});
  CHECK(ints.matmul(ints).to_vector<int64_t>() == std::vector<int64_t>{2, 3, 6, 11});
}

TEST_CASE("factories") {
  CHECK(loom::zeros({2, 2}).sum().item<float>() == 0);
  CHECK(loom::ones({2, 3}, DType::Int32).sum().item<int64_t>() == 6);
  CHECK(loom::full({2}, 2.5).to_vector<float>() == std::vector<float>{2.5, 2.5});
  CHECK(loom::full({2}, 3).dtype() == DType::Int64);
  CHECK(loom::arange(1, 2, 0.25).to_vector<float>() == std::vector<float>{1, 1.25, 1.5, 1.75});
  CHECK(loom::arange(5, 0, -2).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 1});
  CHECK(loom::empty({16}).numel() == 16);
  CHECK(loom::zeros_like(loom::ones({3}, DType::Int8)).dtype() == DType::Int8);
}

TEST_CASE("in-place add_ and mul_ write through views, on cpu and through sim") {
  for (const char* dev : {"cpu", "sim"}) {
    INFO(dev);
    loom::Device d(dev);
    auto a = loom::arange(6, DType::Float32).view({2, 3}).to(d);
    auto col = a.select(1, 1);  // strided view into a
    col.add_(loom::from_vector<float>({10, 20}, {2}).to(d), 2);
    CHECK(a.cpu().to_vector<float>() == std::vector<float>{0, 21, 2, 3, 44, 5});
    auto row = a.select(0, 0);
    row.mul_(loom::full({}, 3.0).to(d));  // 0-d broadcast
    CHECK(a.cpu().to_vector<float>() == std::vector<float>{0, 63, 6, 3, 44, 5});
    auto i = loom::arange(3).to(d);
    i += i;
    CHECK(i.cpu().to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4});
  }
  const auto v0 = loom::ones({2}).storage()->version();
  auto t = loom::ones({2});
  t.add_(t);
  CHECK(t.storage()->version() == v0 + 1);  // in-place writes bump the version
}

TEST_CASE("set_num_threads bounds the CPU kernels' team; results do not depend on it") {
  const int before = loom::get_num_threads();
  CHECK(before >= 1);
  auto x = loom::rand({1 << 20});
  const float two = x.sum().item<float>();
  loom::set_num_threads(1);
  CHECK(loom::get_num_threads() == 1);
  CHECK(x.sum().item<float>() == two);  // fixed chunking: the same bits
  loom::set_num_threads(before);
  CHECK(loom::get_num_threads() == before);
  CHECK_THROWS_WITH(loom::set_num_threads(0), Catch::Contains("positive number of threads"));
}
