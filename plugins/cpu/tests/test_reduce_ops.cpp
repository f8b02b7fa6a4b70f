// Every reduction op x every dtype it registers, against a long-double
// reference: inner, outer, middle, multiple and all dims, on contiguous,
// transposed, sliced (offset and step), broadcast (stride 0) and size-1
// inputs, and into a non-contiguous output.
#include <catch2/catch.hpp>

#include "test_reduce_support.hpp"

using namespace loom_test;
using namespace loom_test::reduce;

namespace {

// The [3,4,5] inputs every op is checked on, in several layouts.
std::vector<std::pair<std::string, Tensor>> layouts(int32_t dt) {
  std::vector<std::pair<std::string, Tensor>> v;
  Tensor a = make(dt, {3, 4, 5});
  fill_pattern(a, 1);
  v.emplace_back("contiguous", a);
  Tensor b = make(dt, {5, 4, 3});
  fill_pattern(b, 2);
  v.emplace_back("transposed", transpose(b, 0, 2));
  Tensor c = make(dt, {7, 9, 11});
  fill_pattern(c, 3);
  v.emplace_back("sliced", slice(slice(slice(c, 0, 2, 3), 1, 1, 4, 2), 2, 3, 5, 1));
  Tensor d = make(dt, {3, 1, 5});
  fill_pattern(d, 4);
  v.emplace_back("broadcast", expand(d, {3, 4, 5}));
  Tensor e = make(dt, {1, 1, 5});
  fill_pattern(e, 5);
  v.emplace_back("broadcast twice", expand(e, {3, 4, 5}));
  return v;
}

const std::vector<std::vector<int64_t>>& dim_sets() {
  static const std::vector<std::vector<int64_t>> v{{0}, {1}, {2}, {0, 2}, {0, 1}, {1, 2}, {0, 1, 2}, {}};
  return v;
}

// The parameters each op is run with (var/std: corrections; norm: p).
std::vector<double> params_of(const std::string& op) {
  if (op == "var" || op == "std") return {0.0, 1.0, 2.5};
  if (op == "norm") return {2.0, 1.0, 0.0, 3.0, 0.5, HUGE_VAL, -HUGE_VAL, -1.0};
  return {0.0};
}

}  // namespace

TEST_CASE("value reductions: every op, dtype, layout and dim set", "[reduce][cpu]") {
  for (const std::string& op : value_ops()) {
    for (int32_t dt : dtypes_of(op)) {
      for (const auto& [name, t] : layouts(dt)) {
        INFO(op << " " << loom::plugin::dtype_name(dt) << " " << name);
        for (double p : params_of(op))
          for (const auto& dims : dim_sets()) check(op, t, dims, p);
      }
    }
  }
}

TEST_CASE("index reductions: every op, dtype, layout and dim", "[reduce][cpu]") {
  for (const std::string& op : index_ops()) {
    for (int32_t dt : dtypes_of(op)) {
      for (const auto& [name, t] : layouts(dt)) {
        INFO(op << " " << loom::plugin::dtype_name(dt) << " " << name);
        for (int64_t d = 0; d < 3; ++d) check(op, t, {d});
      }
      // argmax without a dim: the core passes a contiguous 1-D view, dims [0].
      Tensor flat = make(dt, {60});
      fill_pattern(flat, 6);
      check(op, flat, {0});
    }
  }
}

TEST_CASE("reductions: size-1 dims, 4-d inputs and strided outputs", "[reduce][cpu]") {
  for (int32_t dt : {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT32, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BOOL}) {
    Tensor ones = make(dt, {1, 3, 1, 4});
    fill_pattern(ones, 7);
    Tensor four = make(dt, {2, 3, 4, 5});
    fill_pattern(four, 8);
    for (const std::string& op : value_ops()) {
      const auto ok = dtypes_of(op);
      if (std::find(ok.begin(), ok.end(), dt) == ok.end()) continue;
      INFO(op << " " << loom::plugin::dtype_name(dt));
      for (const auto& dims : std::vector<std::vector<int64_t>>{{0}, {2}, {0, 2}, {1}, {1, 3}, {}})
        check(op, ones, dims, op == "norm" ? 2.0 : 1.0);
      for (const auto& dims :
           std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}, {0, 3}, {1, 2}, {0, 1, 2}, {3}}) {
        check(op, four, dims, op == "norm" ? 2.0 : 1.0);
        check(op, four, dims, op == "norm" ? 2.0 : 1.0, /*out_transposed=*/true);
      }
    }
    for (const std::string& op : index_ops()) {
      for (int64_t d = 0; d < 4; ++d) {
        check(op, four, {d});
        check(op, four, {d}, 0, /*out_transposed=*/true);
        check(op, ones, {d});
      }
    }
  }
}

TEST_CASE("reductions of 0-d tensors", "[reduce][cpu]") {
  for (const std::string& op : value_ops()) {
    for (int32_t dt : dtypes_of(op)) {
      INFO(op << " " << loom::plugin::dtype_name(dt));
      Tensor s = make(dt, {});
      fill_pattern(s, 9);
      check(op, s, {}, op == "norm" ? 3.0 : 0.0);
    }
  }
  for (const std::string& op : index_ops()) {
    Tensor s = make(LOOM_DTYPE_FLOAT32, {});
    set(s, {}, 2.5);
    check(op, s, {});
    // PyTorch lets a scalar reduce over dim 0 (or -1): nothing moves.
    Tensor out = make(op == "argmax" || op == "argmin" ? LOOM_DTYPE_INT64 : LOOM_DTYPE_FLOAT32, {});
    Tensor idx = make(LOOM_DTYPE_INT64, {});
    std::vector<LoomTensorDesc> outs{out.desc()};
    if (has_indices(op)) outs.push_back(idx.desc());
    run(op, {s.desc()}, outs, {int_list_value({0})});
    CHECK(get(out, {}) == (out.dtype == LOOM_DTYPE_INT64 ? 0 : 2.5));
  }
}
