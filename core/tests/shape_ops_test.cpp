// The shape family end to end: views alias their base, copying ops against
// hand-computed values (torch 1.13 where noted), promotion, bad input, and
// sim through the composite / CPU fallback. Exhaustive kernel numerics are
// in plugins/cpu/tests/test_shape.cpp.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <cmath>

using loom::DType;
using loom::IntArrayRef;

namespace {
std::vector<float> f32(const loom::Tensor& t) { return t.to_vector<float>(); }
std::vector<int64_t> i64(const loom::Tensor& t) { return t.to_vector<int64_t>(); }
loom::Tensor iota(IntArrayRef sizes, DType dt = DType::Float32) {
  return loom::arange(0, loom::shape_numel(sizes), 1, dt).view(sizes);
}
}  // namespace

TEST_CASE("permute, t, movedim are views with permuted strides", "[shape]") {
  auto a = iota({2, 3, 4});
  auto p = loom::permute(a, {2, 0, 1});
  CHECK(p.sizes() == IntArrayRef({4, 2, 3}));
  CHECK(p.strides() == IntArrayRef({1, 12, 4}));
  CHECK(p.storage().get() == a.storage().get());
  CHECK(loom::permute(a, {-1, 0, 1}).strides() == p.strides());
  CHECK(f32(p.contiguous()).at(3) == 12.0f);  // p[0,1,0] = a[1,0,0]
  CHECK_THROWS_WITH(loom::permute(a, {0, 1}), Catch::Contains("permute: number of dims don't match"));
  CHECK_THROWS_WITH(loom::permute(a, {0, 1, 1}), Catch::Contains("dim 1 appears multiple times"));
  CHECK_THROWS_WITH(loom::permute(a, {0, 1, 3}), Catch::Contains("dimension 3 is out of range"));
  CHECK(loom::t(iota({2, 3})).sizes() == IntArrayRef({3, 2}));
  CHECK(loom::t(iota({3})).sizes() == IntArrayRef({3}));
  CHECK_THROWS_WITH(loom::t(a), Catch::Contains("<= 2 dimensions"));
  auto m = loom::movedim(a, 0, -1);  // torch: shape [3, 4, 2]
  CHECK(m.sizes() == IntArrayRef({3, 4, 2}));
  CHECK(m.strides() == IntArrayRef({4, 1, 12}));
  auto m2 = loom::movedim(a, {0, 1}, {2, 0});  // torch: shape [3, 4, 2] too
  CHECK(m2.sizes() == IntArrayRef({3, 4, 2}));
  CHECK(loom::movedim(a, {1}, {0}).sizes() == IntArrayRef({3, 2, 4}));
  CHECK_THROWS_WITH(loom::movedim(a, {0, 1}, {0}), Catch::Contains("same number of elements"));
  CHECK_THROWS_WITH(loom::movedim(a, {0, 0}, {1, 2}), Catch::Contains("appears multiple times"));
}

TEST_CASE("flatten and unflatten", "[shape]") {
  auto a = iota({2, 3, 4});
  auto f = loom::flatten(a);
  CHECK(f.sizes() == IntArrayRef({24}));
  CHECK(f.storage().get() == a.storage().get());  // a view when contiguous
  CHECK(loom::flatten(a, 1).sizes() == IntArrayRef({2, 12}));
  CHECK(loom::flatten(a, 0, -2).sizes() == IntArrayRef({6, 4}));
  CHECK(loom::flatten(loom::full({}, 3.0)).sizes() == IntArrayRef({1}));
  auto tr = loom::flatten(a.transpose(0, 2));  // not viewable: a copy
  CHECK(f32(tr).at(1) == 12.0f);
  CHECK_THROWS_WITH(loom::flatten(a, 2, 1), Catch::Contains("start_dim (2) cannot come after end_dim (1)"));
  auto u = loom::unflatten(a, 1, {3, 1});
  CHECK(u.sizes() == IntArrayRef({2, 3, 1, 4}));
  CHECK(loom::unflatten(a, -1, {2, -1}).sizes() == IntArrayRef({2, 3, 2, 2}));
  CHECK(loom::unflatten(a.transpose(0, 2), 0, {2, 2}).sizes() == IntArrayRef({2, 2, 3, 2}));
  CHECK_THROWS_WITH(loom::unflatten(a, 1, {2, 2}), Catch::Contains("don't multiply up to the size of dim 1 (3)"));
  CHECK_THROWS_WITH(loom::unflatten(a, 2, {-1, -1}), Catch::Contains("only one dimension can be inferred"));
  CHECK_THROWS_WITH(loom::unflatten(a, 2, {}), Catch::Contains("sizes must be non-empty"));
}

TEST_CASE("slice clamps like Python and writes through to the base", "[shape]") {
  auto a = iota({10});
  CHECK(f32(loom::slice(a, 0, 2, 8, 3)) == std::vector<float>{2, 5});
  CHECK(f32(loom::slice(a, 0, -3)) == std::vector<float>{7, 8, 9});
  CHECK(f32(loom::slice(a, 0, -100, 2)) == std::vector<float>{0, 1});
  CHECK(f32(loom::slice(a, 0, 8, 100)) == std::vector<float>{8, 9});
  CHECK(loom::slice(a, 0, 7, 3).numel() == 0);  // end before start: empty
  CHECK(loom::slice(a, 0, 20, 30).numel() == 0);
  CHECK(f32(loom::slice(a, 0, std::nullopt, std::nullopt, 4)) == std::vector<float>{0, 4, 8});
  auto m = iota({3, 4});
  auto col = loom::slice(m, 1, 1, 4, 2);  // columns 1 and 3
  CHECK(col.sizes() == IntArrayRef({3, 2}));
  col.fill_(-1);
  CHECK(f32(m) == std::vector<float>{0, -1, 2, -1, 4, -1, 6, -1, 8, -1, 10, -1});
  CHECK_THROWS_WITH(loom::slice(a, 0, 0, 5, 0), Catch::Contains("slice: step must be positive, got 0"));
  CHECK_THROWS_WITH(loom::slice(a, 1), Catch::Contains("dimension 1 is out of range"));
}

TEST_CASE("split, split_with_sizes, chunk, unbind", "[shape]") {
  auto a = iota({5, 2});
  auto s = loom::split(a, 2);
  REQUIRE(s.size() == 3);
  CHECK(s[2].sizes() == IntArrayRef({1, 2}));
  CHECK(f32(s[1]) == std::vector<float>{4, 5, 6, 7});
  s[1].fill_(0);  // views
  CHECK(f32(a).at(4) == 0.0f);
  auto w = loom::split(a, IntArrayRef{1, 4});
  REQUIRE(w.size() == 2);
  CHECK(w[1].sizes() == IntArrayRef({4, 2}));
  CHECK_THROWS_WITH(loom::split(a, IntArrayRef{1, 1}),
                    Catch::Contains("split_sizes to sum exactly to 5") && Catch::Contains("split_sizes=[1, 1]"));
  CHECK_THROWS_WITH(loom::split(a, 0), Catch::Contains("split_size can only be 0"));
  CHECK(loom::split(loom::zeros({0}), 3).size() == 1);
  CHECK(loom::chunk(iota({5}), 3).size() == 3);  // sizes 2, 2, 1
  CHECK(loom::chunk(iota({6}), 4).size() == 3);  // sizes 2, 2, 2: fewer than asked (torch)
  CHECK(loom::chunk(loom::zeros({0}), 2).size() == 2);
  CHECK_THROWS_WITH(loom::chunk(iota({5}), 0), Catch::Contains("chunks must be greater than 0"));
  auto u = loom::unbind(a, 1);
  REQUIRE(u.size() == 2);
  CHECK(f32(u[1]) == std::vector<float>{1, 3, 0, 0, 9});  // rows 2 and 3 were zeroed
  CHECK_THROWS_WITH(loom::unbind(loom::full({}, 1.0)), Catch::Contains("unbind"));
}

TEST_CASE("cat joins, promotes, skips legacy empties and names bad tensors", "[shape]") {
  auto a = iota({2, 2});
  auto b = loom::from_vector<int32_t>({7, 8}, {2, 1});
  auto c = loom::cat({a, b}, 1);
  CHECK(c.dtype() == DType::Float32);
  CHECK(f32(c) == std::vector<float>{0, 1, 7, 2, 3, 8});
  CHECK(loom::cat({a, a.t()}).sizes() == IntArrayRef({4, 2}));
  CHECK(f32(loom::cat({a, a.t()}, -2)) == std::vector<float>{0, 1, 2, 3, 0, 2, 1, 3});
  CHECK(loom::cat({loom::ones({1}, DType::Int8), loom::ones({1}, DType::UInt8)}).dtype() == DType::Int16);
  CHECK(loom::cat({loom::ones({1}, DType::Bool), loom::ones({1}, DType::Bool)}).dtype() == DType::Bool);
  // Legacy rule: 1-D empties are skipped whatever the others' shape is.
  auto e = loom::cat({loom::zeros({0}, DType::Float64), a, loom::zeros({0})}, 1);
  CHECK(e.dtype() == DType::Float64);
  CHECK(e.sizes() == IntArrayRef({2, 2}));
  CHECK(loom::cat({loom::zeros({0}), loom::zeros({0})}).sizes() == IntArrayRef({0}));
  CHECK(loom::cat({loom::zeros({0, 3}), loom::ones({2, 3})}).sizes() == IntArrayRef({2, 3}));
  std::vector<loom::Tensor> many;
  for (int i = 0; i < 100; ++i) many.push_back(loom::full({1, 3}, i));
  auto big = loom::cat(many);
  CHECK(big.sizes() == IntArrayRef({100, 3}));
  CHECK(f32(big).at(3 * 57 + 2) == 57.0f);
  CHECK_THROWS_WITH(loom::cat({}), Catch::Contains("cat: expected a non-empty list of Tensors"));
  CHECK_THROWS_WITH(loom::cat({a, loom::ones({2, 3})}, 0),
                    Catch::Contains("Sizes of tensors must match except in dimension 0") &&
                        Catch::Contains("Expected size 2 but got size 3 for tensor number 1"));
  CHECK_THROWS_WITH(loom::cat({a, loom::ones({2})}), Catch::Contains("same number of dimensions: got 2 and 1"));
  CHECK_THROWS_WITH(loom::cat({a, a}, 2), Catch::Contains("dimension 2 is out of range"));
  CHECK_THROWS_WITH(loom::cat({loom::full({}, 1.0)}), Catch::Contains("zero-dimensional tensor (at position 0)"));
}

TEST_CASE("stack, repeat, tile", "[shape]") {
  auto a = loom::from_vector<float>({1, 2}, {2});
  auto b = loom::from_vector<float>({3, 4}, {2});
  CHECK(f32(loom::stack({a, b})) == std::vector<float>{1, 2, 3, 4});
  auto s1 = loom::stack({a, b}, -1);
  CHECK(s1.sizes() == IntArrayRef({2, 2}));
  CHECK(f32(s1) == std::vector<float>{1, 3, 2, 4});
  CHECK_THROWS_WITH(loom::stack({a, loom::ones({3})}),
                    Catch::Contains("equal size, but got [2] at entry 0 and [3] at entry 1"));
  CHECK_THROWS_WITH(loom::stack({a}, 2), Catch::Contains("stack: dimension 2 is out of range"));
  // torch.tensor([1, 2]).repeat(2, 2) = [[1,2,1,2],[1,2,1,2]]
  auto r = loom::repeat(a, {2, 2});
  CHECK(r.sizes() == IntArrayRef({2, 4}));
  CHECK(f32(r) == std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2});
  auto m = iota({2, 2}, DType::Int64);
  CHECK(i64(loom::repeat(m.t(), {1, 2})) == std::vector<int64_t>{0, 2, 0, 2, 1, 3, 1, 3});
  CHECK(loom::repeat(m, {0, 3}).sizes() == IntArrayRef({0, 6}));
  CHECK_THROWS_WITH(loom::repeat(m, {2}), Catch::Contains("can not be smaller than number of dimensions"));
  CHECK(loom::tile(m, {2}).sizes() == IntArrayRef({2, 4}));
  CHECK(i64(loom::tile(m, {2})) == std::vector<int64_t>{0, 1, 0, 1, 2, 3, 2, 3});
  CHECK(loom::tile(a, {2, 1, 1}).sizes() == IntArrayRef({2, 1, 2}));
}

TEST_CASE("flip and roll", "[shape]") {
  auto a = iota({2, 3}, DType::Int32);
  CHECK(a.dtype() == DType::Int32);
  CHECK(loom::flip(a, {0}).to_vector<int32_t>() == std::vector<int32_t>{3, 4, 5, 0, 1, 2});
  CHECK(loom::flip(a, {-1, 0}).to_vector<int32_t>() == std::vector<int32_t>{5, 4, 3, 2, 1, 0});
  CHECK(loom::flip(a.t(), {1}).to_vector<int32_t>() == std::vector<int32_t>{3, 0, 4, 1, 5, 2});
  CHECK(loom::flip(a, {}).to_vector<int32_t>() == a.to_vector<int32_t>());
  CHECK_THROWS_WITH(loom::flip(a, {0, -2}), Catch::Contains("flip: dim 0 appears multiple times"));
  CHECK_THROWS_WITH(loom::flip(a, {2}), Catch::Contains("flip: dimension 2 is out of range"));
  // torch.arange(6).view(2,3).roll(1) = [[5,0,1],[2,3,4]]
  CHECK(loom::roll(a, {1}).to_vector<int32_t>() == std::vector<int32_t>{5, 0, 1, 2, 3, 4});
  CHECK(loom::roll(a, {1}).sizes() == IntArrayRef({2, 3}));
  CHECK(loom::roll(a, {-1}, {1}).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 0, 4, 5, 3});
  CHECK(loom::roll(a, {1, 5}, {0, 1}).to_vector<int32_t>() == std::vector<int32_t>{4, 5, 3, 1, 2, 0});
  CHECK(loom::roll(a.t(), {1}).to_vector<int32_t>() == std::vector<int32_t>{5, 0, 3, 1, 4, 2});
  CHECK(loom::roll(a, {1, 1}, {1, 1}).to_vector<int32_t>() == std::vector<int32_t>{1, 2, 0, 4, 5, 3});
  CHECK(loom::roll(loom::full({}, 7.0), {3}).item<float>() == 7.0f);
  CHECK(loom::roll(loom::zeros({0, 2}), {1}, {0}).sizes() == IntArrayRef({0, 2}));
  CHECK(loom::flip(loom::full({}, 2.0), {0}).item<float>() == 2.0f);
  CHECK(loom::flip(loom::zeros({3, 0}), {1}).sizes() == IntArrayRef({3, 0}));
  CHECK_THROWS_WITH(loom::roll(a, {1, 2}), Catch::Contains("exactly one entry when dims is empty"));
  CHECK_THROWS_WITH(loom::roll(a, {1, 2}, {0}), Catch::Contains("shifts and dimensions must align. shifts: 2, dims: 1"));
}

TEST_CASE("tril and triu, out of place and in place", "[shape]") {
  auto a = iota({3, 4}) + 1.0;
  CHECK(f32(loom::tril(a)) == std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0});
  CHECK(f32(loom::triu(a, 1)) == std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12});
  CHECK(f32(loom::tril(a, -1)) == std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0});
  CHECK(f32(loom::triu(a, -5)) == f32(a));
  CHECK(f32(loom::tril(a.t())) == std::vector<float>{1, 0, 0, 2, 6, 0, 3, 7, 11, 4, 8, 12});
  auto batch = loom::ones({2, 2, 2}, DType::Bool);
  CHECK(loom::triu(batch).to_vector<bool>() == std::vector<bool>{1, 1, 0, 1, 1, 1, 0, 1});
  auto b = a.clone();
  auto col = loom::slice(b, 1, 1);  // non-contiguous, in place
  loom::tril_(col);
  CHECK(f32(b) == std::vector<float>{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12});
  loom::triu_(b, 2);
  CHECK(f32(b) == std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK_THROWS_WITH(loom::tril(loom::ones({3})), Catch::Contains("tril: input tensor must have at least 2 dimensions"));
  auto v = loom::ones({3});
  CHECK_THROWS_WITH(loom::triu_(v), Catch::Contains("triu_: input tensor must have at least 2 dimensions"));
}

TEST_CASE("sort and argsort order NaN above everything", "[shape]") {
  auto a = loom::from_vector<float>({3, NAN, -1, 3, -INFINITY, 0}, {6});
  auto [v, i] = loom::sort(a);
  auto vs = f32(v);
  CHECK(std::vector<float>(vs.begin(), vs.begin() + 5) == std::vector<float>{-INFINITY, -1, 0, 3, 3});
  CHECK(std::isnan(vs[5]));
  CHECK(i.dtype() == DType::Int64);
  CHECK(i64(i) == std::vector<int64_t>{4, 2, 5, 0, 3, 1});  // torch (stable=True)
  auto [dv, di] = loom::sort(a, 0, true);
  CHECK(std::isnan(f32(dv)[0]));
  CHECK(i64(di) == std::vector<int64_t>{1, 0, 3, 5, 2, 4});
  auto m = loom::from_vector<int16_t>({3, 1, 2, 9, 7, 8}, {2, 3});
  CHECK(i64(loom::argsort(m)) == std::vector<int64_t>{1, 2, 0, 1, 2, 0});
  CHECK(i64(loom::argsort(m, 0, true)) == std::vector<int64_t>{1, 1, 1, 0, 0, 0});
  CHECK(loom::sort(m.t(), 1).first.to_vector<int16_t>() == std::vector<int16_t>{3, 9, 1, 7, 2, 8});
  auto h = loom::from_vector<float>({2.5, -1, 0.5}, {3}).to(DType::BFloat16);
  CHECK(f32(loom::sort(h).first.to(DType::Float32)) == std::vector<float>{-1, 0.5, 2.5});
  CHECK(loom::sort(loom::full({}, 4.0)).second.item<int64_t>() == 0);
  CHECK(loom::sort(loom::zeros({3, 0})).first.sizes() == IntArrayRef({3, 0}));
  CHECK_THROWS_WITH(loom::sort(m, 2), Catch::Contains("sort: dimension 2 is out of range"));
}

TEST_CASE("topk picks the k largest or smallest", "[shape]") {
  auto a = loom::from_vector<double>({4, NAN, 1, 9, 4, -2}, {6});
  auto [v, i] = loom::topk(a, 3);
  auto vs = v.to_vector<double>();
  CHECK(std::isnan(vs[0]));
  CHECK(vs[1] == 9);
  CHECK(vs[2] == 4);
  CHECK(i64(i) == std::vector<int64_t>{1, 3, 0});
  auto [sv, si] = loom::topk(a, 2, 0, false);
  CHECK(sv.to_vector<double>() == std::vector<double>{-2, 1});
  CHECK(i64(si) == std::vector<int64_t>{5, 2});
  auto m = loom::from_vector<int64_t>({5, 1, 7, 3, 0, 2}, {2, 3});
  auto [mv, mi] = loom::topk(m, 1, 0);
  CHECK(mv.sizes() == IntArrayRef({1, 3}));
  CHECK(i64(mv) == std::vector<int64_t>{5, 1, 7});
  CHECK(i64(mi) == std::vector<int64_t>{0, 0, 0});
  CHECK(loom::topk(m, 0).first.sizes() == IntArrayRef({2, 0}));
  CHECK_THROWS_WITH(loom::topk(m, 4), Catch::Contains("topk: k (4) is out of range for dimension 1 of size 3"));
  CHECK_THROWS_WITH(loom::topk(m, -1), Catch::Contains("topk: k (-1) is out of range"));
  CHECK_THROWS_WITH(loom::topk(loom::ones({3}, DType::Bool), 1), Catch::Contains("topk: not implemented for dtype bool"));
}

TEST_CASE("shape ops on sim: cat via its composite, the rest via the CPU fallback", "[shape]") {
  loom::Device sim("sim");
  auto a = iota({2, 3});
  auto b = iota({1, 3}) * 2.0;
  const auto before = loom::fallback_count("cat", "sim");
  auto c = loom::cat({a.to(sim), b.to(sim)});
  CHECK(c.device() == sim);
  CHECK(loom::fallback_count("cat", "sim") == before);  // the composite, not the fallback
  CHECK(f32(c.cpu()) == f32(loom::cat({a, b})));
  CHECK(f32(loom::flip(a.to(sim), {1}).cpu()) == f32(loom::flip(a, {1})));
  CHECK(f32(loom::tril(a.to(sim)).cpu()) == f32(loom::tril(a)));
  auto [v, i] = loom::sort(a.to(sim), 0, true);
  CHECK(v.device() == sim);
  CHECK(i64(i.cpu()) == i64(loom::sort(a, 0, true).second));
  CHECK(f32(loom::repeat(a.to(sim), {2, 1}).cpu()) == f32(loom::repeat(a, {2, 1})));
}
