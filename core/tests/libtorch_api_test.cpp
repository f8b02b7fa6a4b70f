// The libtorch spellings of the core (TensorOptions factories, indexing,
// accessors, libtorch's print format): each checked against the values
// libtorch 1.13 gives for the same calls.
#include <catch2/catch.hpp>
#include <loom/loom.h>

using namespace loom::indexing;
using loom::Tensor;

namespace {
std::vector<float> values(const Tensor& t) { return t.contiguous().to(loom::kFloat).to_vector<float>(); }
}  // namespace

TEST_CASE("TensorOptions factories take dtype, device and requires_grad") {
  auto z = loom::zeros({2, 3}, loom::dtype(loom::kDouble).requires_grad(true));
  CHECK(z.dtype() == loom::kDouble);
  CHECK(z.requires_grad());
  CHECK(z.sizes() == loom::DimVector{2, 3});
  CHECK(loom::ones(4, loom::kLong).dtype() == loom::kLong);  // a bare int is a 1-d size
  CHECK(loom::ones(4, loom::kLong).sizes() == loom::DimVector{4});
  CHECK(loom::empty({3}, loom::Device(loom::kCPU)).device() == loom::cpu_device());
  CHECK(loom::arange(5, loom::kFloat).dtype() == loom::kFloat);
  CHECK(loom::arange(2, 8, 2, loom::TensorOptions(loom::kInt)).to_vector<int32_t>() ==
        std::vector<int32_t>{2, 4, 6});
  CHECK(loom::full({2}, 7, loom::dtype(loom::kInt)).to_vector<int32_t>() == std::vector<int32_t>{7, 7});
  auto r = loom::randint(0, 10, {100}, loom::kLong);
  CHECK(r.dtype() == loom::kLong);
  CHECK(r.min().item<int64_t>() >= 0);
  CHECK(r.max().item<int64_t>() < 10);
  auto like = loom::randn_like(z, loom::dtype(loom::kFloat));
  CHECK(like.dtype() == loom::kFloat);
  CHECK(like.sizes() == z.sizes());
  CHECK(loom::eye(2, loom::kFloat).to_vector<float>() == std::vector<float>{1, 0, 0, 1});
  CHECK(z.options().dtype_opt() == loom::kDouble);
}

TEST_CASE("torch::tensor and from_blob as libtorch's") {
  auto i = loom::tensor({1, 2, 3});
  CHECK(i.dtype() == loom::kLong);
  auto f = loom::tensor({{1.5, 2.0}, {3.0, 4.0}});
  CHECK(f.dtype() == loom::kFloat);  // the default float, not double
  CHECK(f.sizes() == loom::DimVector{2, 2});
  CHECK(loom::tensor(2.5, loom::kDouble).dim() == 0);
  CHECK(loom::tensor({true, false}).dtype() == loom::kBool);
  CHECK_THROWS_WITH(loom::tensor({{1, 2}, {3}}), Catch::Contains("ragged"));

  float data[6] = {0, 1, 2, 3, 4, 5};
  auto b = loom::from_blob(data, {2, 3});
  data[4] = 40;  // no copy: the tensor sees the caller's memory
  CHECK(b[1][1].item<float>() == 40);
  auto bt = loom::from_blob(data, {3, 2}, {1, 3});
  CHECK(values(bt) == std::vector<float>{0, 3, 1, 40, 2, 5});
}

TEST_CASE("index and index_put_ follow PyTorch's rules") {
  auto x = loom::arange(24, loom::kFloat).view({2, 3, 4});
  CHECK(values(x.index({Slice(), 0})) == std::vector<float>{0, 1, 2, 3, 12, 13, 14, 15});   // x[:, 0]
  CHECK(values(x.index({Ellipsis, Slice(1, None, 2)})).size() == 12);                      // x[..., 1::2]
  CHECK(values(x.index({1, Slice(-2), -1})) == std::vector<float>{19, 23});                 // x[1, -2:, -1]
  CHECK(x.index({None, 0}).sizes() == loom::DimVector{1, 3, 4});                           // x[None, 0]
  CHECK(x.index({"...", 0}).sizes() == loom::DimVector{2, 3});                             // x[..., 0]
  // An advanced index next to an integer: the integer is a select.
  auto idx = loom::tensor({2, 0});
  CHECK(values(x.index({0, idx})) == std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});
  auto mask = x > 20;
  CHECK(values(x.index({mask})) == std::vector<float>{21, 22, 23});
  CHECK(values(x[1][2]) == std::vector<float>{20, 21, 22, 23});

  auto y = loom::zeros({3, 4});
  y.index_put_({0, Slice(None, 2)}, 1.5);
  y.index_put_({Slice(), 3}, loom::tensor({7.0, 8.0, 9.0}));
  y.index_put_({y > 8}, -1);
  CHECK(values(y) == std::vector<float>{1.5, 1.5, 0, 7, 0, 0, 0, 8, 0, 0, 0, -1});

  CHECK_THROWS_WITH(x.index({0, 0, 0, 0}), Catch::Contains("too many indices"));
  CHECK_THROWS_WITH(x.index({5}), Catch::Contains("out of bounds"));
  CHECK_THROWS_WITH(x.index({Ellipsis, Ellipsis}), Catch::Contains("ellipsis"));
  CHECK_THROWS_WITH(x.index({loom::tensor({0.5})}), Catch::Contains("tensors used as indices"));
  CHECK_THROWS_WITH(x[7], Catch::Contains("out of bounds for dimension 0 with size 2"));
}

TEST_CASE("indexing records autograd like PyTorch's") {
  auto w = loom::ones({3, 2}, loom::requires_grad());
  auto picked = w.index({loom::tensor({0, 0, 2}), Slice()});
  picked.sum().backward();
  CHECK(values(w.grad()) == std::vector<float>{2, 2, 0, 0, 1, 1});
}

TEST_CASE("accessor reads and writes through strides") {
  auto t = loom::arange(6, loom::kFloat).view({2, 3}).t();  // non-contiguous
  auto a = t.accessor<float, 2>();
  CHECK(a.size(0) == 3);
  CHECK(a[2][1] == 5);
  a[0][1] = 30;
  CHECK(t.index({0, 1}).item<float>() == 30);
  CHECK_THROWS_WITH((t.accessor<double, 2>()), Catch::Contains("float32"));
  CHECK_THROWS_WITH((t.accessor<float, 1>()), Catch::Contains("2 dims"));
}

TEST_CASE("Tensor methods under libtorch's names") {
  auto x = loom::tensor({{3.0, -4.0}, {0.0, 1.0}});
  CHECK(x.norm().item<float>() == Approx(std::sqrt(26.0)));
  CHECK(x.max().item<float>() == 3);
  CHECK(x.min().item<float>() == -4);
  CHECK(x.clamp_min(0).min().item<float>() == 0);
  CHECK(x.clamp_max(0).max().item<float>() == 0);
  CHECK(loom::ones({1, 3, 1}).squeeze().sizes() == loom::DimVector{3});
  CHECK(x.type_as(loom::zeros({1}, loom::kDouble)).scalar_type() == loom::kDouble);
  CHECK(x.all().item<bool>() == false);
  CHECK(x.any(1).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK(x.mm(x).sizes() == loom::DimVector{2, 2});
  CHECK(!x.is_cuda());
  CHECK(loom::Device(loom::kCPU).is_cpu());
}

TEST_CASE("operator<< prints as libtorch does") {
  std::ostringstream os;
  os << loom::arange(6, loom::kFloat).view({2, 3});
  CHECK(os.str() == " 0  1  2\n 3  4  5\n[ CPUFloatType{2,3} ]");
  CHECK(loom::tensor({1.5, -2.25}).toString() == " 1.5000\n-2.2500\n[ CPUFloatType{2} ]");
  CHECK(loom::tensor(7).toString() == "7\n[ CPULongType{} ]");
}
