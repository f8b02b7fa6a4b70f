// The CUDA indexing and shape kernels against the CPU plugin, through loom.
// Needs a GPU: without one every case says why and returns (the host math
// is covered by indexing_ops_test.cu). Each case runs an op on both devices,
// compares the results exactly (these ops move or add values in the CPU's
// order) and checks the op ran natively on cuda (no CPU fallback).
#include "device_test_util.hpp"

#include <catch2/catch.hpp>
#include <loom/loom.h>

#include "device_test_util.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using loom_cuda_test::gpu;
using loom_cuda_test::have_gpu;
using loom_cuda_test::on_gpu;

template <class T>
void check_same(const loom::Tensor& cpu, const loom::Tensor& cuda) {
  REQUIRE(cuda.device() == gpu());
  CHECK(cuda.sizes() == cpu.sizes());
  CHECK(cuda.cpu().contiguous().to_vector<T>() == cpu.contiguous().to_vector<T>());
}

// Runs `op` on CPU and CUDA operands and compares; `names` must not fall back.
template <class T, class Op>
void same_on_both(const std::vector<std::string>& names, Op op) {
  std::vector<uint64_t> before;
  for (const auto& n : names) before.push_back(loom::fallback_count(n, "cuda"));
  const loom::Tensor expect = op([](const loom::Tensor& t) { return t; });
  const loom::Tensor got = op(on_gpu);
  check_same<T>(expect, got);
  for (size_t i = 0; i < names.size(); ++i) {
    INFO("op " << names[i]);
    CHECK(loom::fallback_count(names[i], "cuda") == before[i]);
  }
}


loom::Tensor ints(const std::vector<int64_t>& v, std::vector<int64_t> sizes) {
  return loom::from_vector<int64_t>(v, sizes);
}

// [0, n) mod m as int64.
loom::Tensor residues(int64_t n, int64_t m) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i % m;
  return ints(v, {n});
}

// Floats as bit patterns, so NaN compares equal to the same NaN.
std::vector<uint32_t> bits_of(const loom::Tensor& t) {
  const std::vector<float> v = t.cpu().contiguous().to_vector<float>();
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

}  // namespace

TEST_CASE("cuda gather, index_select, scatters and index_add_ match the CPU") {
  if (!have_gpu()) return;
  loom::manual_seed(7);
  const loom::Tensor x = loom::randn({4, 5});
  const loom::Tensor idx = ints({3, 0, 1, 1, 2, 0, 3, 3, 0, 2}, {2, 5});
  same_on_both<float>({"gather"}, [&](auto place) { return loom::gather(place(x), 0, place(idx)); });
  same_on_both<float>({"index_select"},
                      [&](auto place) { return loom::index_select(place(x.t()), 1, place(ints({2, 0, 2}, {3}))); });
  const loom::Tensor src = loom::randn({2, 5});
  same_on_both<float>({"scatter_.src"}, [&](auto place) { return loom::scatter(place(x), 0, place(idx), place(src)); });
  same_on_both<float>({"scatter_add_"},
                      [&](auto place) { return loom::scatter_add(place(x), 0, place(idx), place(src)); });
  // Few kept positions, a long dim: the atomic path (sums of small integers
  // in float are exact, so any order gives the CPU's result).
  const loom::Tensor many = residues(4096, 7);
  const loom::Tensor rows = loom::ones({4096, 3});
  same_on_both<float>({"index_add_"}, [&](auto place) {
    return loom::index_add(place(loom::zeros({7, 3})), 0, place(many), place(rows), 2);
  });
  same_on_both<int32_t>({"index_add_"}, [&](auto place) {
    return loom::index_add(place(loom::zeros({7, 3}, loom::DType::Int32)), 0, place(many),
                           place(rows.to(loom::DType::Int32)), -3);
  });
}

TEST_CASE("cuda indexing reports an out-of-range index as the CPU does") {
  if (!have_gpu()) return;
  const loom::Tensor x = on_gpu(loom::randn({3, 4}));
  CHECK_THROWS_WITH(loom::gather(x, 1, on_gpu(ints({0, 4, 1}, {3, 1}))),
                    Catch::Contains("index 4 is out of bounds for dimension 1 with size 4"));
  CHECK_THROWS_WITH(loom::embedding(x, on_gpu(ints({1, 3}, {2}))),
                    Catch::Contains("index 3 is out of range for num_embeddings 3"));
}

TEST_CASE("cuda masked ops match the CPU") {
  if (!have_gpu()) return;
  const loom::Tensor x = residues(24, 5).to(loom::DType::Float32).view({4, 6});
  const loom::Tensor mask = x.gt(loom::full({}, 2.0));
  same_on_both<float>({"masked_fill_.Scalar"},
                      [&](auto place) { return loom::masked_fill(place(x), place(mask), -1.5); });
  same_on_both<float>({"masked_select"}, [&](auto place) { return loom::masked_select(place(x), place(mask)); });
  same_on_both<int64_t>({"nonzero"}, [&](auto place) { return loom::nonzero(place(x.t())); });
}

TEST_CASE("cuda cat, flip, roll, tril/triu, pad and embedding match the CPU") {
  if (!have_gpu()) return;
  loom::manual_seed(3);
  const loom::Tensor a = loom::randn({3, 4, 5});
  const loom::Tensor b = loom::randn({3, 2, 5});
  same_on_both<float>({"cat"}, [&](auto place) { return loom::cat({place(a), place(b), place(a)}, 1); });
  same_on_both<float>({"flip"}, [&](auto place) { return loom::flip(place(a), {0, 2}); });
  same_on_both<float>({"roll"}, [&](auto place) { return loom::roll(place(a), {2, -1}, {1, 2}); });
  same_on_both<float>({"tril"}, [&](auto place) { return loom::tril(place(a), 1); });
  same_on_both<float>({"triu"}, [&](auto place) { return loom::triu(place(a.transpose(0, 2)), -1); });
  same_on_both<float>({"pad"}, [&](auto place) { return loom::pad(place(a), {1, 2, 2, 0}, "reflect"); });
  same_on_both<float>({"pad"}, [&](auto place) { return loom::pad(place(a), {3, -1}, "constant", 0.5); });
  same_on_both<float>({"pad"}, [&](auto place) { return loom::pad(place(a), {2, 2, 1, 1}, "replicate"); });
  same_on_both<float>({"embedding"},
                      [&](auto place) { return loom::embedding(place(a.select(0, 0)), place(ints({2, 0, 2, 1}, {2, 2}))); });
}

TEST_CASE("cuda sort and topk match the CPU, NaN last and ties in index order") {
  if (!have_gpu()) return;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const loom::Tensor x =
      loom::from_vector<float>({3, nan, -0.0f, 1, 0, 3, -2, nan, 1, 1, -5, 2}, {2, 6});
  for (bool descending : {false, true}) {
    const auto [cv, ci] = loom::sort(x, 1, descending);
    const auto [gv, gi] = loom::sort(on_gpu(x), 1, descending);
    check_same<int64_t>(ci, gi);
    CHECK(bits_of(gv) == bits_of(cv));  // NaN != NaN: compare the bits
  }
  const loom::Tensor y = loom::from_vector<int32_t>({5, 1, 5, 2, 9, 1, 5, 0}, {8});
  const auto [cv, ci] = loom::topk(y, 3);
  const auto [gv, gi] = loom::topk(on_gpu(y), 3);
  check_same<int32_t>(cv, gv);
  check_same<int64_t>(ci, gi);
}
