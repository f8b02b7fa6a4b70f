// Reductions past kParallelGrain: every op on inner, outer, middle and full
// reductions of large inputs (the parallel, chunked and split paths), and
// results that are bit-for-bit the same with 1, 2 and 3 OpenMP threads.
#include <catch2/catch.hpp>

#include "test_reduce_support.hpp"

#include <cmath>
#include <cstring>

using namespace loom_test;
using namespace loom_test::reduce;

namespace {

// Sets the cpu device's thread count (the slot behind loom::set_num_threads)
// and restores it on scope exit.
struct Threads {
  const LoomDeviceTypeDesc& d = host().devices.at("cpu");
  int32_t saved = d.get_num_threads(d.device_data);
  explicit Threads(int32_t n) { REQUIRE(d.set_num_threads(d.device_data, n) == nullptr); }
  ~Threads() { d.set_num_threads(d.device_data, saved); }
};

// Fills a float32 or float64 tensor fast (fill_pattern walks an
// std::function per element): full mantissas over 16 binades, both signs,
// so partial sums round. (float32 block totals add up exactly in double,
// so float64 is what shows a change in combination order in the bits.)
Tensor big_float(int32_t dt, std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = make(dt, std::move(shape));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    const double m = std::ldexp(static_cast<double>(s >> 8) + std::ldexp(static_cast<double>(s), -32),
                                static_cast<int>(s % 16) - 30);
    const double v = s & 0x80u ? -m : m;
    if (dt == LOOM_DTYPE_FLOAT32) reinterpret_cast<float*>(t.store->data())[i] = static_cast<float>(v);
    else reinterpret_cast<double*>(t.store->data())[i] = v;
  }
  return t;
}

// The raw bytes of every output of one call, for bitwise comparison.
std::vector<uint64_t> raw_result(const std::string& op, const Tensor& in, const std::vector<int64_t>& dims,
                                 double param) {
  Tensor out = make(out_dtype(op, in.dtype), keepdim_shape(in.shape, dims));
  Tensor idx = make(LOOM_DTYPE_INT64, out.shape);
  std::vector<LoomTensorDesc> outs{out.desc()};
  if (has_indices(op)) outs.push_back(idx.desc());
  std::vector<LoomValue> values{int_list_value(dims)};
  if (has_param(op)) values.push_back(float_value(param));
  run(op, {in.desc()}, outs, values);
  std::vector<uint64_t> bytes = *out.store;
  bytes.insert(bytes.end(), idx.store->begin(), idx.store->end());
  return bytes;
}

}  // namespace

TEST_CASE("every reduction on large inputs matches the reference", "[reduce][cpu][large]") {
  struct Case {
    std::vector<int64_t> shape;
    std::vector<std::vector<int64_t>> dims;
  };
  const std::vector<Case> cases{
      {{300, 700}, {{0}, {1}, {}}},
      {{50000, 3}, {{0}, {1}}},
      {{3, 50000}, {{1}, {0}}},
      {{40, 300, 12}, {{0, 2}, {1}}},
      {{1 << 17}, {{0}}},
  };
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT32, LOOM_DTYPE_BFLOAT16}) {
    for (const Case& c : cases) {
      Tensor a = make(dt, c.shape);
      fill_pattern(a, 12);
      for (const auto& dims : c.dims) {
        for (const std::string& op : value_ops()) {
          const auto ok = dtypes_of(op);
          if (std::find(ok.begin(), ok.end(), dt) == ok.end()) continue;
          // Long float products of the pattern overflow and reach 0 (0 * inf
          // = NaN in any order but the reference's); see the case below.
          if (op == "prod" && is_floating(dt)) continue;
          INFO(op << " " << loom::plugin::dtype_name(dt) << " shape[0] " << c.shape[0] << " dims "
                  << dims.size());
          check(op, a, dims, op == "norm" ? 2.0 : 1.0);
        }
        if (dims.size() == 1)
          for (const std::string& op : index_ops()) check(op, a, dims);
      }
      if (c.shape.size() == 2) check("sum", transpose(a, 0, 1), {0});
    }
    if (is_floating(dt)) {  // products near 1 stay finite
      Tensor q = make(dt, {200, 1000});
      for_each_index(q.shape, [&](const std::vector<int64_t>& i) {
        set(q, i, 1 + static_cast<LD>((i[0] * 7 + i[1] * 13) % 17 - 8) / 256);
      });
      for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {1}, {}}) check("prod", q, dims);
    }
  }
}

TEST_CASE("results do not depend on the thread count", "[reduce][cpu][large]") {
  struct Case {
    std::vector<int64_t> shape;
    std::vector<int64_t> dims;
  };
  const std::vector<Case> cases{
      {{1 << 21}, {0}},               // one long slice: its chunks run in parallel
      {{3, 1 << 19}, {1}},            // fewer slices than threads
      {{64, 1 << 15}, {1}},           // many slices, one per thread block
      {{1 << 15, 64}, {0}},           // outer layout, one column block
      {{1 << 17, 3}, {0}},            // outer layout, narrow: its row chunks in parallel
      {{64, 2048, 16}, {0, 2}},       // middle kept
      {{64, 2048, 16}, {1}},          // middle reduced
  };
  for (const Case& c : cases) for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    const Tensor a = big_float(dt, c.shape, 5);
    for (const std::string& op : {"sum", "mean", "prod", "var", "norm", "logsumexp", "amax", "argmax"}) {
      if (op == std::string("argmax") && c.dims.size() > 1) continue;
      INFO(op << " " << loom::plugin::dtype_name(dt) << " shape[0] " << c.shape[0]);
      const double param = op == std::string("norm") ? 2.0 : 1.0;
      std::vector<uint64_t> one, two, three;
      {
        Threads t(1);
        one = raw_result(op, a, c.dims, param);
      }
      {
        Threads t(2);
        two = raw_result(op, a, c.dims, param);
      }
      {
        Threads t(3);
        three = raw_result(op, a, c.dims, param);
      }
      CHECK(one == two);
      CHECK(one == three);
    }
    check("sum", a, c.dims);
    check("mean", a, c.dims);
  }
}

TEST_CASE("long slices keep NaN, ties and the first index across chunks", "[reduce][cpu][large]") {
  const int64_t n = (1 << 20) + 123;  // 17 chunks, the last one partial
  Tensor a = make(LOOM_DTYPE_FLOAT32, {n});
  float* p = reinterpret_cast<float*>(a.store->data());
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 1000);
  for (const std::string& op : {"argmax", "argmin", "max.dim", "amax", "sum"}) check(op, a, {0});
  p[900000] = 5000;  // a unique max in chunk 13
  p[950000] = 5000;  // ... and a tie after it
  check("argmax", a, {0});
  check("max.dim", a, {0});
  p[700001] = NAN;  // NaN wins everywhere, the first one for the index ops
  p[1000003] = NAN;
  for (const std::string& op : {"argmax", "argmin", "max.dim", "min.dim", "amax", "amin", "sum", "prod",
                                "logsumexp", "var"})
    check(op, a, {0}, 1.0);
  Tensor two = make(LOOM_DTYPE_FLOAT32, {2, n});
  std::memcpy(two.store->data(), a.store->data(), static_cast<size_t>(n) * 4);
  std::memcpy(reinterpret_cast<float*>(two.store->data()) + n, a.store->data(), static_cast<size_t>(n) * 4);
  check("argmax", two, {1});
  check("sum", two, {1});
}
