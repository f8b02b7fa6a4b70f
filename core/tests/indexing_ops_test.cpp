// Indexing ops end to end: index_select, gather, scatter, scatter_add,
// index_add, masked_fill, masked_select, nonzero, advanced indexing and
// index_put_, against naive loops written here or values from torch 1.13
// (pasted as literals); dtype and shape rules; the errors; sim through the
// fallback. Kernel edge cases (strides, dtypes, threads) live in
// plugins/cpu/tests/test_indexing.cpp.
#include <catch2/catch.hpp>
#include <loom/loom.h>

#include <vector>

using loom::DType;
using loom::Tensor;
using I64 = std::vector<int64_t>;
using F64 = std::vector<double>;

namespace {
F64 vals(const Tensor& t) { return t.to_vector<double>(); }
Tensor ix(const I64& v, loom::IntArrayRef shape) { return loom::from_vector<int64_t>(v, shape); }
Tensor ix(const I64& v) { return ix(v, {static_cast<int64_t>(v.size())}); }
Tensor range(loom::IntArrayRef shape, DType t = DType::Float32) {
  return loom::arange(loom::shape_numel(shape), t).view(shape);
}

// Row-major multi-indices of a shape.
std::vector<I64> positions(const I64& shape) {
  std::vector<I64> out;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  for (int64_t l = 0; l < n; ++l) {
    I64 p(shape.size());
    int64_t r = l;
    for (size_t d = shape.size(); d-- > 0;) {
      p[d] = r % shape[d];
      r /= shape[d];
    }
    out.push_back(p);
  }
  return out;
}
int64_t offset(const I64& shape, const I64& p) {
  int64_t o = 0;
  for (size_t d = 0; d < shape.size(); ++d) o = o * shape[d] + p[d];
  return o;
}
}  // namespace

TEST_CASE("index_select picks slices along a dim", "[indexing]") {
  auto a = range({3, 4});
  CHECK(vals(loom::index_select(a, 1, ix({3, 0, 0}))) == F64{3, 0, 0, 7, 4, 4, 11, 8, 8});
  CHECK(vals(loom::index_select(a, -2, ix({2}))) == F64{8, 9, 10, 11});
  auto i32 = loom::from_vector<int32_t>({1}, {1});
  CHECK(vals(loom::index_select(a, 0, i32)) == F64{4, 5, 6, 7});
  CHECK(vals(loom::index_select(a.t(), 0, ix({1}))) == F64{1, 5, 9});  // strided self
  auto s = loom::index_select(a, 0, ix({}, {0}));
  CHECK(s.sizes() == loom::IntArrayRef({0, 4}));
  auto scalar = loom::index_select(loom::full({}, 5.0), 0, ix({0}));
  CHECK(scalar.dim() == 0);
  CHECK(scalar.item<float>() == 5.0f);
  CHECK(loom::index_select(a, 1, ix({2}, {})).sizes() == loom::IntArrayRef({3, 1}));  // 0-d index
  CHECK(loom::index_select(range({4}, DType::Bool), 0, ix({0, 1})).dtype() == DType::Bool);
}

TEST_CASE("gather and scatter match naive loops", "[indexing]") {
  const I64 sshape{3, 4, 5}, ishape{2, 4, 3};
  for (int64_t dim = 0; dim < 3; ++dim) {
    auto self = range(sshape, DType::Float64);
    I64 iv;
    for (size_t k = 0; k < 24; ++k) iv.push_back((static_cast<int64_t>(k) * 7 + dim) % sshape[dim]);
    auto index = ix(iv, ishape);
    auto g = loom::gather(self, dim, index);
    REQUIRE(g.sizes() == loom::IntArrayRef(ishape));
    const F64 sv = vals(self), gv = vals(g);
    for (const I64& p : positions(ishape)) {
      I64 q = p;
      q[dim] = iv[offset(ishape, p)];
      CHECK(gv[offset(ishape, p)] == sv[offset(sshape, q)]);
    }
    auto src = range(ishape, DType::Float64) + 100.0;
    auto sa = loom::scatter_add(self, dim, index, src);
    F64 want = sv;
    const F64 srcv = vals(src);
    for (const I64& p : positions(ishape)) {
      I64 q = p;
      q[dim] = iv[offset(ishape, p)];
      want[offset(sshape, q)] += srcv[offset(ishape, p)];
    }
    CHECK(vals(sa) == want);
    CHECK(vals(self) == sv);  // out of place
  }
}

TEST_CASE("scatter with src and value, in place and out of place", "[indexing]") {
  auto z = loom::zeros({3, 5});
  auto src = range({2, 5}) + 1.0;
  auto index = ix({0, 1, 2, 0, 0, 2, 0, 0, 1, 2}, {2, 5});
  // torch.zeros(3,5).scatter_(0, index, src) with src = arange(1, 11).view(2,5)
  CHECK(vals(loom::scatter(z, 0, index, src)) == F64{1, 7, 8, 4, 5, 0, 2, 0, 9, 0, 6, 0, 3, 0, 10});
  CHECK(vals(z) == F64(15, 0.0));
  loom::scatter_(z, 1, ix({0, 4}, {1, 2}), 2.5);
  CHECK(vals(z) == F64{2.5, 0, 0, 0, 2.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  auto ints = loom::zeros({4}, DType::Int32);
  CHECK(loom::scatter(ints, 0, ix({1, 3}), 7).to_vector<int32_t>() == std::vector<int32_t>{0, 7, 0, 7});
  // Duplicate indices: the last in index order wins (CPU).
  CHECK(vals(loom::scatter(loom::zeros({2}), 0, ix({1, 1, 1}), loom::from_vector<float>({1, 2, 3}, {3}))) ==
        F64{0, 3});
  // scatter_add_ into a transposed (strided) self.
  auto t = loom::zeros({4, 3}).t();
  loom::scatter_add_(t, 1, ix({0, 0, 3}, {1, 3}), loom::ones({1, 3}));
  CHECK(vals(t) == F64{2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("index_add with alpha and duplicates", "[indexing]") {
  auto self = range({3, 4});
  auto src = loom::ones({3, 2});
  auto r = loom::index_add(self, 1, ix({3, 3}), src, 2);
  CHECK(vals(r) == F64{0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15});
  auto i32 = loom::from_vector<int32_t>({0}, {1});
  auto ints = range({2, 2}, DType::Int64);
  loom::index_add_(ints, 0, i32, ints.narrow(0, 1, 1).clone(), 3);
  CHECK(ints.to_vector<int64_t>() == I64{6, 10, 2, 3});
  auto h = loom::zeros({2}, DType::Float16);
  CHECK(vals(loom::index_add(h, 0, ix({1, 1, 1}), loom::full({3}, 0.5, DType::Float16))) == F64{0, 1.5});
}

TEST_CASE("masked_fill broadcasts the mask, takes a Scalar or a 0-d tensor", "[indexing]") {
  auto a = range({2, 3});
  auto m = loom::from_vector<bool>({true, false, true}, {3});
  CHECK(vals(loom::masked_fill(a, m, -1)) == F64{-1, 1, -1, -1, 4, -1});
  CHECK(vals(loom::masked_fill(a, m, loom::full({}, 9.0))) == F64{9, 1, 9, 9, 4, 9});
  auto ints = range({3}, DType::Int64);
  loom::masked_fill_(ints, m, 2.7);  // converted to self's dtype, as PyTorch
  CHECK(ints.to_vector<int64_t>() == I64{2, 1, 2});
  // Out of place, self broadcast with a larger mask.
  auto big = loom::masked_fill(loom::zeros({3}), loom::from_vector<bool>({true, false}, {2, 1}), 1);
  CHECK(big.sizes() == loom::IntArrayRef({2, 3}));
  CHECK(vals(big) == F64{1, 1, 1, 0, 0, 0});
  auto t = range({3, 2}).t();  // strided self
  loom::masked_fill_(t, m, 0);
  CHECK(vals(t) == F64{0, 2, 0, 0, 3, 0});
  auto scalar = loom::full({}, 5.0);
  CHECK(loom::masked_fill(scalar, loom::full({}, true, DType::Bool), 1).item<double>() == 1);
  CHECK(loom::masked_fill(scalar, loom::full({}, false, DType::Bool), 1).item<double>() == 5);
}

TEST_CASE("nonzero and masked_select size their output from the data", "[indexing]") {
  auto a = loom::from_vector<float>({0, 1, 0, NAN, -0.0f, 2}, {2, 3});
  auto nz = loom::nonzero(a);
  CHECK(nz.dtype() == DType::Int64);
  CHECK(nz.sizes() == loom::IntArrayRef({3, 2}));
  CHECK(nz.to_vector<int64_t>() == I64{0, 1, 1, 0, 1, 2});
  auto tup = loom::nonzero_as_tuple(a);
  REQUIRE(tup.size() == 2);
  CHECK(tup[0].to_vector<int64_t>() == I64{0, 1, 1});
  CHECK(tup[1].to_vector<int64_t>() == I64{1, 0, 2});
  CHECK(loom::nonzero(loom::full({}, 3.0)).sizes() == loom::IntArrayRef({1, 0}));
  CHECK(loom::nonzero(loom::zeros({0, 4})).sizes() == loom::IntArrayRef({0, 2}));
  CHECK(loom::nonzero(a.t()).to_vector<int64_t>() == I64{0, 1, 1, 0, 2, 1});  // strided
  auto m = loom::from_vector<bool>({true, false, true}, {3});
  CHECK(vals(loom::masked_select(range({2, 3}), m)) == F64{0, 2, 3, 5});
  // torch.masked_select(arange(3.), [[True],[False]]) -> [0, 1, 2]
  CHECK(vals(loom::masked_select(range({3}), loom::from_vector<bool>({true, false}, {2, 1}))) == F64{0, 1, 2});
  CHECK(loom::masked_select(range({3}), loom::zeros({3}, DType::Bool)).numel() == 0);
}

TEST_CASE("advanced indexing places result dims as PyTorch", "[indexing]") {
  auto y = range({2, 3, 4, 5}, DType::Int64);
  // Values from torch 1.13.
  auto A = loom::index(y, {std::nullopt, ix({0, 2}), std::nullopt, ix({1, -1})});
  CHECK(A.sizes() == loom::IntArrayRef({2, 2, 4}));
  CHECK(A.to_vector<int64_t>() == I64{1, 6, 11, 16, 61, 66, 71, 76, 44, 49, 54, 59, 104, 109, 114, 119});
  auto B = loom::index(y, {ix({0, 1}, {2, 1}), std::nullopt, ix({1, 2})});
  CHECK(B.sizes() == loom::IntArrayRef({2, 2, 3, 5}));
  CHECK(B.to_vector<int64_t>() ==
        I64{5,  6,  7,  8,  9,  25, 26, 27, 28, 29, 45,  46,  47,  48,  49,  10, 11, 12, 13, 14,
            30, 31, 32, 33, 34, 50, 51, 52, 53, 54, 65,  66,  67,  68,  69,  85, 86, 87, 88, 89,
            105, 106, 107, 108, 109, 70, 71, 72, 73, 74, 90, 91, 92, 93, 94, 110, 111, 112, 113, 114});
  auto C = loom::index(y, {std::nullopt, ix({0, 1}), ix({1, 2}, {2, 1})});
  CHECK(C.sizes() == loom::IntArrayRef({2, 2, 2, 5}));
  CHECK(C.to_vector<int64_t>() == I64{5,  6,  7,  8,  9,  25, 26, 27, 28, 29, 10, 11, 12, 13,
                                      14, 30, 31, 32, 33, 34, 65, 66, 67, 68, 69, 85, 86, 87,
                                      88, 89, 70, 71, 72, 73, 74, 90, 91, 92, 93, 94});
  auto x = range({3, 4}, DType::Int64);
  CHECK(loom::index(x, {loom::gt(x, 5)}).to_vector<int64_t>() == I64{6, 7, 8, 9, 10, 11});
  auto rows = loom::from_vector<bool>({true, false, true}, {3});
  CHECK(loom::index(x, {rows}).to_vector<int64_t>() == I64{0, 1, 2, 3, 8, 9, 10, 11});
  auto cols = loom::from_vector<uint8_t>({1, 0, 1, 0}, {4});
  auto F = loom::index(x, {std::nullopt, cols});
  CHECK(F.sizes() == loom::IntArrayRef({3, 2}));
  CHECK(F.to_vector<int64_t>() == I64{0, 2, 4, 6, 8, 10});
  CHECK(loom::index(x.t(), {loom::from_vector<int32_t>({3, -1}, {2})}).to_vector<int64_t>() ==
        I64{3, 7, 11, 3, 7, 11});
  CHECK(loom::index(x, {std::nullopt}).is_same(x));
  // A 0-d mask adds a dim: x[True] is [1, 3, 4], x[:, False] is [3, 0, 4].
  auto yes = loom::full({}, true, DType::Bool), no = loom::full({}, false, DType::Bool);
  CHECK(loom::index(x, {yes}).sizes() == loom::IntArrayRef({1, 3, 4}));
  CHECK(loom::index(x, {yes}).to_vector<int64_t>() == x.to_vector<int64_t>());
  CHECK(loom::index(x, {std::nullopt, no}).sizes() == loom::IntArrayRef({3, 0, 4}));
}

TEST_CASE("index_put_ writes, accumulates and broadcasts values", "[indexing]") {
  auto z = loom::zeros({3, 4});
  loom::index_put_(z, {ix({0, 0, 2})}, loom::full({}, 1.0), true);
  CHECK(vals(z) == F64{2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1});
  auto j = loom::zeros({2, 3, 4});
  loom::index_put_(j, {std::nullopt, ix({0, 2}), ix({1, 3})}, loom::from_vector<float>({5, 6}, {2}));
  F64 want(24, 0.0);
  want[1] = want[13] = 5;
  want[11] = want[23] = 6;
  CHECK(vals(j) == want);
  auto k = loom::zeros({2, 3, 4});
  loom::index_put_(k, {ix({1, 0}), std::nullopt, ix({3, -4})}, range({2, 3}));
  CHECK(vals(k) == F64{3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2});
  auto l = loom::zeros({2, 3, 4});
  loom::index_put_(l, {ix({1, 1})}, loom::ones({3, 4}), true);
  CHECK(loom::sum(l).item<float>() == 24.0f);
  CHECK(vals(l.select(0, 1)) == F64(12, 2.0));
  // A self whose indexed dims do not merge into one view: written via a copy.
  auto base = loom::zeros({4, 3});
  auto strided = base.t();  // [3, 4], dims 0 and 1 do not merge
  loom::index_put_(strided, {ix({2}), ix({1})}, loom::full({}, 7.0));
  CHECK(base.to_vector<float>()[1 * 3 + 2] == 7.0f);
  CHECK(loom::sum(base).item<float>() == 7.0f);
  auto all = loom::zeros({2, 2});
  loom::index_put_(all, {loom::full({}, true, DType::Bool)}, loom::full({}, 5.0));
  CHECK(vals(all) == F64{5, 5, 5, 5});
  auto m = range({2, 3});
  auto out = loom::index_put(m, {loom::gt(m, 3.0)}, loom::full({}, -1.0));
  CHECK(vals(out) == F64{0, 1, 2, 3, -1, -1});
  CHECK(vals(m) == F64{0, 1, 2, 3, 4, 5});
}

TEST_CASE("indexing errors name the op, the argument and the bad value", "[indexing]") {
  auto a = range({3, 4});
  using Catch::Contains;
  CHECK_THROWS_WITH(loom::gather(a, 1, ix({4}, {1, 1})),
                    Contains("gather: index 4 is out of bounds for dimension 1 with size 4"));
  CHECK_THROWS_WITH(loom::gather(a, 1, ix({-1}, {1, 1})), Contains("index -1 is out of bounds for dimension 1"));
  CHECK_THROWS_WITH(loom::gather(a, 1, loom::zeros({1, 1}, DType::Int32)),
                    Contains("gather: expected index to have dtype int64, got int32"));
  CHECK_THROWS_WITH(loom::gather(a, 1, ix({0})), Contains("same number of dimensions"));
  CHECK_THROWS_WITH(loom::gather(a, 1, ix({0, 0, 0, 0}, {4, 1})), Contains("no larger than self"));
  CHECK_THROWS_WITH(loom::gather(a, 2, ix({0}, {1, 1})), Contains("gather: dimension 2 is out of range"));
  CHECK_THROWS_WITH(loom::index_select(a, 1, ix({1, 4})),
                    Contains("index_select: index 4 is out of bounds for dimension 1 with size 4"));
  CHECK_THROWS_WITH(loom::index_select(a, 0, loom::zeros({1})),
                    Contains("index_select: expected index to have dtype int64 or int32, got float32"));
  CHECK_THROWS_WITH(loom::index_select(a, 0, ix({0}, {1, 1})), Contains("index must be 0-d or 1-D"));
  auto z = loom::zeros({3, 4});
  CHECK_THROWS_WITH(loom::scatter_(z, 0, ix({3}, {1, 1}), loom::ones({1, 1})),
                    Contains("scatter_: index 3 is out of bounds for dimension 0 with size 3"));
  CHECK_THROWS_WITH(loom::scatter_(z, 0, ix({0}, {1, 1}), loom::ones({1, 1}, DType::Float64)),
                    Contains("expected src to have self's dtype float32, got float64"));
  CHECK_THROWS_WITH(loom::scatter_add(z, 0, ix({0, 1}, {1, 2}), loom::ones({1, 1})),
                    Contains("no larger than src"));
  CHECK_THROWS_WITH(loom::index_add_(z, 1, ix({9}), loom::ones({3, 1})),
                    Contains("index_add_: index 9 is out of bounds for dimension 1 with size 4"));
  CHECK_THROWS_WITH(loom::index_add_(z, 1, ix({0, 1}), loom::ones({3, 1})),
                    Contains("source has size 1 at dimension 1 but index has 2 elements"));
  CHECK(vals(z) == F64(12, 0.0));  // no stray writes
  auto expanded = loom::zeros({1, 4}).expand({3, 4});
  CHECK_THROWS_WITH(loom::masked_fill_(expanded, loom::ones({3, 4}, DType::Bool), 1),
                    Contains("more than one element at the same memory location"));
  CHECK_THROWS_WITH(loom::masked_fill(a, loom::zeros({4}, DType::UInt8), 1),
                    Contains("masked_fill: expected mask to have dtype bool, got uint8"));
  CHECK_THROWS_WITH(loom::scatter(z, 0, loom::zeros({1, 1}, DType::Int32), 1.0),
                    Contains("scatter: expected index to have dtype int64, got int32"));
  CHECK_THROWS_WITH(loom::scatter_(z, 0, ix({0}), 1.0), Contains("scatter_: index must have the same number of dimensions"));
  CHECK_THROWS_WITH(loom::index_add(z, 0, ix({0}), loom::ones({2, 4})),
                    Contains("index_add: source has size 2 at dimension 0 but index has 1 elements"));
  CHECK_THROWS_WITH(loom::index_add(z, 0, ix({0}), loom::ones({1, 4}, DType::Int64)),
                    Contains("index_add: expected source to have self's dtype float32, got int64"));
  CHECK_THROWS_WITH(loom::masked_fill(a, loom::zeros({4}, DType::Bool), loom::zeros({1})),
                    Contains("value must be a 0-d tensor"));
  CHECK_THROWS_WITH(loom::masked_fill_(z, loom::zeros({2, 3, 4}, DType::Bool), 1),
                    Contains("does not broadcast to self's shape"));
  CHECK_THROWS_WITH(loom::masked_select(a, loom::zeros({5}, DType::Bool)), Contains("masked_select: shapes"));
  CHECK_THROWS_WITH(loom::index(a, {ix({3})}),
                    Contains("index: index 3 is out of bounds for dimension 0 with size 3"));
  CHECK_THROWS_WITH(loom::index(a, {std::nullopt, ix({-5})}),
                    Contains("index: index -5 is out of bounds for dimension 1 with size 4"));
  CHECK_THROWS_WITH(loom::index(a, {loom::zeros({1})}),
                    Contains("indices must be int64, int32, bool or uint8; indices[0] is float32"));
  CHECK_THROWS_WITH(loom::index(a, {std::nullopt, std::nullopt, ix({0})}), Contains("too many indices"));
  CHECK_THROWS_WITH(loom::index(a, {loom::zeros({3, 3}, DType::Bool)}), Contains("does not match the shape"));
  CHECK_THROWS_WITH(loom::index(a, {ix({0, 1}), ix({0, 1, 2})}), Contains("cannot be broadcast"));
  CHECK_THROWS_WITH(loom::index_put_(z, {ix({0})}, loom::ones({4}, DType::Float64)),
                    Contains("index_put_: expected values to have self's dtype float32, got float64"));
  CHECK_THROWS_WITH(loom::index_put_(z, {ix({0})}, loom::ones({3})), Contains("cannot be broadcast"));
  CHECK_THROWS_WITH(loom::index_put_(z, {std::nullopt, ix({4})}, loom::ones({1})),
                    Contains("index_put_: index 4 is out of bounds for dimension 1 with size 4"));
}

TEST_CASE("indexing runs on sim through the fallback", "[indexing]") {
  loom::Device sim("sim");
  auto a = range({3, 4}).to(sim);
  auto g = loom::gather(a, 1, ix({3, 0}, {1, 2}).to(sim));
  CHECK(g.device() == sim);
  CHECK(vals(g.cpu()) == F64{3, 0});
  auto s = loom::scatter_add(a, 0, ix({2}, {1, 1}).to(sim), loom::ones({1, 1}).to(sim));
  CHECK(s.device() == sim);
  CHECK(vals(s.cpu())[8] == 9.0);
  auto nz = loom::nonzero(a);
  CHECK(nz.device() == sim);
  CHECK(nz.size(0) == 11);
  auto r = loom::index(a, {ix({2, 0}).to(sim)});
  CHECK(r.device() == sim);
  CHECK(vals(r.cpu()) == F64{8, 9, 10, 11, 0, 1, 2, 3});
  auto cpu_idx = loom::index(a, {std::nullopt, ix({-1})});  // CPU indices for a sim tensor
  CHECK(cpu_idx.device() == sim);
  CHECK(vals(cpu_idx.cpu()) == F64{3, 7, 11});
  auto m = loom::masked_fill(a, loom::gt(a, 5.0), 0);
  CHECK(loom::sum(m).cpu().item<float>() == 15.0f);
}
