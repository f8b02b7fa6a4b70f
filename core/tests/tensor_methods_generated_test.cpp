// The Tensor methods generated from the op catalog
// (loom/detail/tensor_methods_generated.inc, core/tools/gen_tensor_methods.cpp)
// give what the loom:: functions of the same ops give: the schema's
// overloads, the number forms, defaults, in-place forms and tuple results.
#include <catch2/catch.hpp>
#include <loom/loom.h>

using loom::DType;
using loom::Tensor;

namespace {
std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }
Tensor floats(std::vector<float> v, loom::IntArrayRef sizes) { return loom::from_vector(v, sizes); }
}  // namespace

TEST_CASE("generated lerp: a tensor weight and a number weight") {
  const Tensor a = floats({0, 1, 2, 3}, {4});
  const Tensor end = floats({4, 5, 6, 7}, {4});
  const Tensor weight = floats({0, 0.25f, 0.5f, 1}, {4});
  CHECK(vals(a.lerp(end, weight)) == vals(loom::lerp(a, end, weight)));
  CHECK(vals(a.lerp(end, weight)) == std::vector<double>{0, 2, 4, 7});
  CHECK(vals(a.lerp(end, 0.5)) == vals(loom::lerp(a, end, 0.5)));
  CHECK(vals(a.lerp(end, 0.5)) == std::vector<double>{2, 3, 4, 5});
  // The number stays a wrapped number: float32 in, float32 out.
  CHECK(a.lerp(end, 0.5).dtype() == DType::Float32);

  // Beside the hand-written lerp_(end, weight), its number form.
  Tensor b = a.clone();
  Tensor& same = b.lerp_(end, 0.25);
  CHECK(same.is_same(b));
  CHECK(vals(b) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("generated number forms beside hand-written tensor forms: fmod, eq, remainder_") {
  const Tensor x = floats({-3, -1, 2, 5.5f}, {4});
  CHECK(vals(x.fmod(2)) == vals(loom::fmod(x, loom::scalar_tensor(2, x.device()))));
  CHECK(vals(x.fmod(2)) == std::vector<double>{-1, -1, 0, 1.5});
  CHECK(vals(x.fmod(floats({2, 2, 2, 2}, {4}))) == vals(x.fmod(2)));  // the hand-written one
  CHECK(x.eq(2).dtype() == DType::Bool);
  CHECK(vals(x.eq(2)) == std::vector<double>{0, 0, 1, 0});
  Tensor y = x.clone();
  y.remainder_(2);
  CHECK(vals(y) == vals(loom::remainder(x, 2)));
  // Integers keep their dtype (the number is a wrapped int64).
  const Tensor i = loom::from_vector<int32_t>({7, -7}, {2});
  CHECK(i.fmod(3).dtype() == DType::Int32);
  CHECK(vals(i.fmod(3)) == std::vector<double>{1, -1});
}

TEST_CASE("generated reductions take the schema's defaults") {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(vals(x.prod()) == vals(loom::prod(x)));
  CHECK(x.prod().item<float>() == 720);
  CHECK(vals(x.prod(1)) == std::vector<double>{6, 120});
  // int[]? is a std::optional<IntArrayRef>, as loom::prod takes it: a list
  // needs its type spelled out (a bare int does not).
  CHECK(x.prod(loom::IntArrayRef{0, 1}, true).sizes() == loom::IntArrayRef{1, 1});
  CHECK(x.prod(std::nullopt, false, DType::Float64).dtype() == DType::Float64);
  CHECK(vals(x.cumsum(1)) == vals(loom::cumsum(x, 1)));
  CHECK(vals(x.logsumexp(0)) == vals(loom::logsumexp(x, {0})));
}

TEST_CASE("generated in-place methods write self and return it") {
  Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  const Tensor before = x.clone();
  const uint32_t version = x._version();
  Tensor& r = x.tril_();
  CHECK(r.is_same(x));
  CHECK(vals(x) == vals(loom::tril(before)));
  CHECK(vals(x) == std::vector<double>{1, 0, 0, 4, 5, 0, 7, 8, 9});
  CHECK(x._version() > version);

  Tensor z = loom::zeros({2, 3});
  const Tensor index = loom::from_vector<int64_t>({2, 0}, {2, 1});
  z.scatter_(1, index, 1.5);  // scatter_.value
  CHECK(vals(z) == std::vector<double>{0, 0, 1.5, 1.5, 0, 0});
  z.scatter_(1, index, floats({7, 8}, {2, 1}));  // scatter_.src
  CHECK(vals(z) == std::vector<double>{0, 0, 7, 8, 0, 0});
}

TEST_CASE("generated methods with several results return a tuple") {
  const Tensor x = floats({3, 1, 2}, {3});
  auto [values, indices] = x.sort();
  auto [want_values, want_indices] = loom::sort(x);
  CHECK(vals(values) == vals(want_values));
  CHECK(vals(indices) == vals(want_indices));
  auto [top, where] = x.topk(2);
  CHECK(vals(top) == std::vector<double>{3, 2});
  CHECK(vals(where) == std::vector<double>{0, 2});
}

TEST_CASE("generated methods record autograd like the functions") {
  Tensor a = floats({1, 2}, {2}).set_requires_grad(true);
  const Tensor end = floats({3, 6}, {2});
  a.lerp(end, 0.25).sum().backward();
  CHECK(vals(a.grad()) == std::vector<double>{0.75, 0.75});
}
