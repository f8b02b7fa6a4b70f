#include <catch2/catch.hpp>
#include <loom/loom.h>

using loom::DType;

TEST_CASE("views share storage and differ in sizes, strides and offset") {
  auto a = loom::arange(12, DType::Float32).view({3, 4});
  CHECK(a.is_contiguous());
  CHECK(a.strides()[0] == 4);
  auto t = a.t();
  CHECK_FALSE(t.is_contiguous());
  CHECK(t.storage().get() == a.storage().get());
  CHECK(t.sizes()[0] == 4);
  CHECK(t.strides()[0] == 1);

  auto row = a.select(0, 1);
  CHECK(row.storage_offset() == 4);
  CHECK(row.to_vector<float>() == std::vector<float>{4, 5, 6, 7});
  auto col = a.select(1, 2);
  CHECK(col.to_vector<float>() == std::vector<float>{2, 6, 10});
  auto mid = a.narrow(1, 1, 2);
  CHECK(mid.to_vector<float>() == std::vector<float>{1, 2, 5, 6, 9, 10});

  auto c = t.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.storage().get() != a.storage().get());
  CHECK(c.to_vector<float>() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});

  // Writing through a view is seen by the base.
  row.fill_(-1);
  CHECK(a.to_vector<float>()[5] == -1);
}

TEST_CASE("view, reshape, expand, squeeze and unsqueeze") {
  auto a = loom::arange(6).view({2, 3});
  CHECK(a.view({-1}).sizes()[0] == 6);
  CHECK(a.view({3, -1}).sizes()[1] == 2);
  CHECK_THROWS_WITH(a.view({4, -1}), Catch::Contains("invalid for input of size 6"));
  CHECK_THROWS_WITH(a.t().view({6}), Catch::Contains("use reshape()"));
  CHECK(a.t().reshape({6}).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 1, 4, 2, 5});

  auto e = loom::arange(3).view({1, 3}).expand({4, 3});
  CHECK(e.strides()[0] == 0);
  CHECK(e.sum().item<int64_t>() == 12);
  CHECK_THROWS_WITH(loom::arange(3).expand({4, 2}), Catch::Contains("must match the existing size 3"));

  auto u = a.unsqueeze(0);
  CHECK(u.dim() == 3);
  CHECK(u.squeeze(0).dim() == 2);
  CHECK(a.unsqueeze(-1).sizes()[2] == 1);
}

TEST_CASE("conversions: to(dtype), to(device), item, from_vector") {
  auto a = loom::from_vector<double>({1.7, -2.2, 3.0}, {3});
  CHECK(a.to(DType::Int32).to_vector<int32_t>() == std::vector<int32_t>{1, -2, 3});
  CHECK(a.to(DType::Bool).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(a.to(DType::Float16).to(DType::Float64).to_vector<double>()[0] == Approx(1.7).epsilon(1e-3));
  CHECK(loom::full({}, 7).item<int64_t>() == 7);
  CHECK_THROWS_WITH(a.item<double>(), Catch::Contains("3 elements cannot be converted"));
  CHECK_THROWS_WITH(loom::from_vector<float>({1, 2, 3}, {2, 2}), Catch::Contains("needs 4 values"));

  auto s = a.to(loom::Device("sim"));
  CHECK(s.device().type_name() == "sim");
  CHECK(s.cpu().to_vector<double>() == a.to_vector<double>());
  CHECK(s.to(DType::Float32).cpu().dtype() == DType::Float32);
}

TEST_CASE("random numbers are reproducible under manual_seed and independent of layout") {
  loom::manual_seed(42);
  auto a = loom::rand({4, 5});
  loom::manual_seed(42);
  auto b = loom::rand({4, 5});
  CHECK(a.to_vector<float>() == b.to_vector<float>());
  auto c = loom::rand({4, 5});
  CHECK(a.to_vector<float>() != c.to_vector<float>());

  loom::manual_seed(7);
  auto n = loom::randn({20000}, DType::Float64);
  const double mean = n.sum().item<double>() / 20000;
  const double var = (n * n).sum().item<double>() / 20000 - mean * mean;
  CHECK(std::abs(mean) < 0.03);
  CHECK(var == Approx(1.0).epsilon(0.05));

  auto u = loom::rand({1000});
  auto v = u.to_vector<float>();
  CHECK(*std::min_element(v.begin(), v.end()) >= 0.0f);
  CHECK(*std::max_element(v.begin(), v.end()) < 1.0f);
  CHECK_THROWS_WITH(loom::zeros({2}, DType::Int64).uniform_(), Catch::Contains("floating point"));
}

TEST_CASE("tensor methods forward to the op functions") {
  auto x = loom::from_vector<float>({1, 5, 3, 2}, {2, 2});
  CHECK(x.mean().item<float>() == 2.75f);
  CHECK(x.mean({1}).to_vector<float>() == std::vector<float>{3, 2.5});
  CHECK(x.amax().item<float>() == 5);
  CHECK(x.max(1).second.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(x.argmin().item<int64_t>() == 0);
  CHECK(x.permute({1, 0}).to_vector<float>() == std::vector<float>{1, 3, 5, 2});
  CHECK(x.flatten().sizes() == loom::IntArrayRef{4});
  CHECK(x.pow(2).to_vector<float>() == std::vector<float>{1, 25, 9, 4});
  CHECK(x.softmax(1).sum({1}).to_vector<float>()[0] == Approx(1.0f));
  CHECK(x.gather(1, loom::from_vector<int64_t>({1, 0}, {2, 1})).to_vector<float>() == std::vector<float>{5, 3});
}
