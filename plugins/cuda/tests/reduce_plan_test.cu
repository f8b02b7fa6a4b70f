// Host tests of the CUDA reductions' planning (kernels/reduce_plan.hpp):
// no kernel runs; a plan and its launch shape are executed by a host
// emulation of what reduce_kernel does with them (which lane and which
// split folds which element) and compared with sums computed from the
// original coordinates. Part of cuda_reduce_ops_tests (main in
// reduce_ops_test.cu).
#include <catch2/catch.hpp>

#include "kernels/reduce_ops.cuh"
#include "kernels/reduce_plan.hpp"

#include <cmath>
#include <numeric>
#include <vector>

using namespace loom::cuda;
using namespace loom::cuda::reduce;

namespace {

// Row-major strides of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t st = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = st;
    st *= shape[d];
  }
  return s;
}

// Σ over `reduced` of x[i] = value_at(offset), computed from the original
// coordinates: out[keepdim multi-index] (dense keepdim output).
std::vector<double> reference_sums(const std::vector<int64_t>& shape, const std::vector<int64_t>& in_strides,
                                   const std::vector<bool>& reduced, const std::vector<double>& x) {
  std::vector<int64_t> oshape = shape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) oshape[d] = 1;
  const auto os = dense_strides(oshape);
  int64_t n = 1, no = 1;
  for (auto s : shape) n *= s;
  for (auto s : oshape) no *= s;
  std::vector<double> out(static_cast<size_t>(no), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, in_off = 0, out_off = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t idx = rest % shape[d];
      rest /= shape[d];
      in_off += idx * in_strides[d];
      if (!reduced[d]) out_off += idx * os[d];
    }
    out[static_cast<size_t>(out_off)] += x[static_cast<size_t>(in_off)];
  }
  return out;
}

// What reduce_kernel does with a plan and launch, on the host: every output,
// split and lane, with the kernel's element-to-lane assignment (vector loads
// included). Counts how often each reduced index is folded per output.
template <class Op>
void emulate(const Op& op, const ReducePlan& plan, const ReduceLaunch& L, const typename Op::In* in,
             std::vector<int>* visits = nullptr) {
  using Acc = typename Op::Acc;
  const int lanes = L.inner ? L.block_x : L.block_y;
  for (int64_t o = 0; o < plan.num_outputs; ++o) {
    int64_t off[3];
    plan.kept.offsets(o, off);
    const typename Op::In* base = in + off[0];
    Acc total = op.init();
    for (int64_t split = 0; split < L.splits; ++split) {
      const int64_t r0 = split * L.split_len, r1 = std::min(plan.num_reduced, r0 + L.split_len);
      Acc block = op.init();
      for (int lane = 0; lane < lanes; ++lane) {
        Acc acc = op.init();
        auto fold = [&](int64_t r) {
          op.add(acc, base[plan.red.offset0(r)], r);
          if (visits) ++(*visits)[static_cast<size_t>(o * plan.num_reduced + r)];
        };
        if (L.vec > 1) {
          const int64_t V = L.vec, vend = r1 / V;
          for (int64_t v = r0 / V + lane; v < vend; v += lanes)
            for (int64_t j = 0; j < V; ++j) fold(v * V + j);
          for (int64_t t = vend * V + lane; t < r1; t += lanes) fold(t);
        } else {
          for (int64_t r = r0 + lane; r < r1; r += lanes) fold(r);
        }
        if (plan.red.ndim >= 2 && r0 + lane < r1) {  // the kernel's cursor finds the same offsets
          WalkCursor cur(plan.red, r0 + lane);
          for (int64_t r = r0 + lane; r < r1; r += lanes, cur.advance(lanes))
            REQUIRE(cur.offset() == plan.red.offset0(r));
        }
        op.combine(block, acc);
      }
      op.combine(total, block);
    }
    op.store(total, plan.num_reduced, off[1], off[2]);
  }
}

struct Case {
  std::vector<int64_t> shape, in_strides;
  std::vector<bool> reduced;
};

// Plans `c` (input of the given strides, dense keepdim output), emulates a
// double sum and compares with the reference; also checks every element is
// folded exactly once for several device sizes.
void check_case(const Case& c) {
  const int32_t ndim = static_cast<int32_t>(c.shape.size());
  std::vector<int64_t> oshape = c.shape;
  for (int32_t d = 0; d < ndim; ++d)
    if (c.reduced[static_cast<size_t>(d)]) oshape[static_cast<size_t>(d)] = 1;
  const auto os = dense_strides(oshape);
  bool red[64];
  for (int32_t d = 0; d < ndim; ++d) red[d] = c.reduced[static_cast<size_t>(d)];
  ReducePlan plan;
  REQUIRE(plan_reduction(ndim, c.shape.data(), c.in_strides.data(), red, os.data(), os.data(), plan));
  int64_t span = 1, no = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    span += (c.shape[static_cast<size_t>(d)] - 1) * c.in_strides[static_cast<size_t>(d)];
    no *= oshape[static_cast<size_t>(d)];
  }
  std::vector<double> x(static_cast<size_t>(span));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 7919) % 1000) - 500.0;
  const auto want = reference_sums(c.shape, c.in_strides, c.reduced, x);
  for (int64_t resident : {1, 7, 132 * 5}) {
    for (int vec : {1, 2}) {
      const ReduceLaunch L = choose_launch(plan, vec, resident);
      std::vector<double> got(static_cast<size_t>(no), -1.0);
      std::vector<int> visits(static_cast<size_t>(plan.num_outputs * plan.num_reduced), 0);
      emulate(SumOp<double, false>{got.data()}, plan, L, x.data(), &visits);
      CHECK(got == want);
      for (int v : visits) REQUIRE(v == 1);
    }
  }
}

}  // namespace

// ------------------------------------------------------------------- plan ---

TEST_CASE("plan: contiguous input reduced over its last dim is one kept and one reduced dim") {
  const int64_t shape[] = {4, 5, 6}, st[] = {30, 6, 1}, os[] = {5, 1, 1};
  const bool red[] = {false, false, true};
  ReducePlan p;
  REQUIRE(plan_reduction(3, shape, st, red, os, os, p));
  CHECK(p.inner_reduced);
  CHECK(p.num_outputs == 20);
  CHECK(p.num_reduced == 6);
  REQUIRE(p.kept.ndim == 1);
  CHECK(p.kept.strides[0][0] == 6);
  CHECK(p.kept.strides[1][0] == 1);
  REQUIRE(p.red.ndim == 1);
  CHECK(p.red.strides[0][0] == 1);
}

TEST_CASE("plan: reducing the leading dim keeps the merged trailing dims innermost") {
  const int64_t shape[] = {4, 5, 6}, st[] = {30, 6, 1}, os[] = {30, 6, 1};
  const bool red[] = {true, false, false};
  ReducePlan p;
  REQUIRE(plan_reduction(3, shape, st, red, os, os, p));
  CHECK_FALSE(p.inner_reduced);
  REQUIRE(p.kept.ndim == 1);
  CHECK(p.kept.shape[0] == 30);
  REQUIRE(p.red.ndim == 1);
  CHECK(p.red.strides[0][0] == 30);
}

TEST_CASE("plan: a transposed input is walked along its smallest stride") {
  const int64_t shape[] = {4, 3}, st[] = {1, 4}, os[] = {1, 1};  // x.t() of a [3, 4] tensor
  const bool red[] = {true, false};
  ReducePlan p;
  REQUIRE(plan_reduction(2, shape, st, red, os, os, p));
  CHECK(p.inner_reduced);
  CHECK(p.red.strides[0][0] == 1);
  CHECK(p.kept.strides[0][0] == 4);
}

TEST_CASE("plan: broadcast, size-1 and empty dims") {
  const int64_t os[] = {0, 1, 1, 1};
  SECTION("a stride-0 reduced dim goes outermost") {
    const int64_t shape[] = {8, 1, 16, 1}, st[] = {0, 16, 1, 1};
    const bool red[] = {true, false, false, false};
    ReducePlan p;
    REQUIRE(plan_reduction(4, shape, st, red, os, os, p));
    CHECK_FALSE(p.inner_reduced);
    CHECK(p.kept.ndim == 1);
    CHECK(p.red.ndim == 1);
    CHECK(p.red.strides[0][0] == 0);
  }
  SECTION("an empty reduced dim gives zero-element slices, outputs remain") {
    const int64_t shape[] = {3, 0}, st[] = {1, 1};
    const bool red[] = {false, true};
    ReducePlan p;
    REQUIRE(plan_reduction(2, shape, st, red, os, os, p));
    CHECK(p.num_outputs == 3);
    CHECK(p.num_reduced == 0);
    CHECK_FALSE(p.inner_reduced);
  }
  SECTION("an empty kept dim gives no outputs") {
    const int64_t shape[] = {0, 5}, st[] = {5, 1};
    const bool red[] = {false, true};
    ReducePlan p;
    REQUIRE(plan_reduction(2, shape, st, red, os, os, p));
    CHECK(p.num_outputs == 0);
  }
  SECTION("every dim reduced: one output at offset 0") {
    const int64_t shape[] = {2, 3}, st[] = {3, 1};
    const bool red[] = {true, true};
    ReducePlan p;
    REQUIRE(plan_reduction(2, shape, st, red, os, os, p));
    CHECK(p.num_outputs == 1);
    CHECK(p.kept.ndim == 0);
    CHECK(p.red.ndim == 1);
    CHECK(p.num_reduced == 6);
  }
}

TEST_CASE("plan: more dims than a walk holds are declined") {
  std::vector<int64_t> shape(13, 2), st(13), os(13, 0);
  int64_t s = 1;
  for (int d = 12; d >= 0; --d) {  // every other dim skipped: nothing merges
    st[static_cast<size_t>(d)] = s;
    s *= 4;
  }
  bool red[13];
  for (auto& r : red) r = true;
  ReducePlan p;
  CHECK_FALSE(plan_reduction(13, shape.data(), st.data(), red, os.data(), os.data(), p));
}

TEST_CASE("plan + launch: every element is folded once into the right output") {
  check_case({{4, 5, 6}, {30, 6, 1}, {false, false, true}});
  check_case({{4, 5, 6}, {30, 6, 1}, {true, false, false}});
  check_case({{4, 5, 6}, {30, 6, 1}, {true, false, true}});
  check_case({{4, 5, 6}, {1, 4, 20}, {false, true, false}});   // column-major input
  check_case({{3, 7, 2, 5}, {70, 10, 5, 1}, {false, true, false, true}});
  check_case({{6, 4}, {8, 1}, {false, true}});                 // padded rows
  check_case({{5, 3}, {0, 1}, {true, false}});                 // broadcast reduced dim
  check_case({{2, 3000}, {3000, 1}, {false, true}});           // long slices: splits
  check_case({{3000, 3}, {3, 1}, {true, false}});              // long columns: splits
  check_case({{1, 1, 9}, {9, 9, 1}, {true, true, true}});
  check_case({{2, 3, 4, 5}, {60, 20, 5, 1}, {true, true, true, true}});
  check_case({{300, 4, 7}, {28, 7, 1}, {true, false, true}});  // two reduced dims, lanes > inner run
  check_case({{6, 5, 4, 3}, {200, 40, 8, 2}, {true, false, true, true}});  // three, nothing merges
  check_case({{700, 3, 5}, {15, 5, 1}, {true, false, true}});  // long two-dim slices: splits
}

TEST_CASE("launch: shapes stay within the kernel's limits") {
  for (int64_t rows : {1, 3, 32, 1000, 100000})
    for (int64_t cols : {1, 2, 33, 4096, 1000000})
      for (bool inner : {true, false})
        for (int vec : {1, 4}) {
          ReducePlan p;
          p.num_outputs = rows;
          p.num_reduced = cols;
          p.inner_reduced = inner;
          const int64_t resident = 132 * 5;
          const ReduceLaunch L = choose_launch(p, vec, resident);
          INFO(rows << " x " << cols << " inner " << inner << " vec " << vec);
          CHECK(L.block_x * L.block_y == kReduceThreads);
          CHECK((L.block_x & (L.block_x - 1)) == 0);
          CHECK(L.splits >= 1);
          CHECK(L.splits <= kMaxSplits);
          CHECK(L.split_len % L.vec == 0);
          CHECK(L.splits * L.split_len >= cols);
          CHECK((L.splits - 1) * L.split_len < std::max<int64_t>(cols, 1));
          CHECK(L.grid_x * (L.inner ? L.block_y : L.block_x) >= rows);
          if (L.splits > 1) CHECK(L.grid_x * L.splits <= resident);
          if (!inner) CHECK(L.vec == 1);
        }
}

TEST_CASE("launch: one long sum fills the device in one wave") {
  ReducePlan p;
  p.num_outputs = 1;
  p.num_reduced = int64_t{1} << 28;
  p.inner_reduced = true;
  const ReduceLaunch L = choose_launch(p, 4, 132 * 5);
  CHECK(L.block_x == kReduceThreads);
  CHECK(L.splits == 132 * 5);
  CHECK(L.split_len % 4 == 0);
}

TEST_CASE("vector_width: only aligned contiguous slices take 16-byte loads") {
  const int64_t shape[] = {8, 64}, st[] = {64, 1}, os[] = {1, 1};
  const bool red[] = {false, true};
  ReducePlan p;
  REQUIRE(plan_reduction(2, shape, st, red, os, os, p));
  alignas(16) static float buf[1024];
  CHECK(vector_width(p, buf, sizeof(float)) == 4);
  CHECK(vector_width(p, buf + 1, sizeof(float)) == 1);
  CHECK(vector_width(p, buf, sizeof(double)) == 2);
  const int64_t st_odd[] = {63, 1};  // rows 63 floats apart: not every row aligned
  const int64_t shape_odd[] = {8, 63};
  REQUIRE(plan_reduction(2, shape_odd, st_odd, red, os, os, p));
  CHECK(vector_width(p, buf, sizeof(float)) == 1);
}

TEST_CASE("scan plan: lines, columns and tiles") {
  ScanPlan p;
  SECTION("scan along the contiguous dim: a warp per line") {
    const int64_t shape[] = {100, 50}, st[] = {50, 1};
    REQUIRE(plan_scan(2, shape, st, st, 1, 132, p));
    CHECK(p.num_lines == 100);
    CHECK(p.len == 50);
    CHECK(p.in_stride == 1);
    CHECK_FALSE(p.columns);
    CHECK(p.tiles == 1);
  }
  SECTION("scan down many contiguous columns: a thread per line") {
    const int64_t shape[] = {10, 8192}, st[] = {8192, 1};
    REQUIRE(plan_scan(2, shape, st, st, 0, 132, p));
    CHECK(p.columns);
    CHECK(p.in_stride == 8192);
  }
  SECTION("few long contiguous columns: thread tiles that cover each line once") {
    const int64_t shape[] = {100000, 64}, st[] = {64, 1};
    REQUIRE(plan_scan(2, shape, st, st, 0, 132, p));
    CHECK(p.columns);
    CHECK(p.tiles > 1);
    CHECK(p.tile_len == 64);  // as many tiles as the shortest worthwhile tile allows
    // The three passes on the host, for one line: tile totals, their
    // inclusive scan, each tile scanned from the total before it.
    std::vector<int64_t> x(static_cast<size_t>(p.len)), want(x.size()), got(x.size(), -1);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 31) % 17);
    std::partial_sum(x.begin(), x.end(), want.begin());
    std::vector<int64_t> totals(static_cast<size_t>(p.tiles), 0);
    for (int64_t t = 0; t < p.tiles; ++t) {
      int64_t b, e;
      p.tile_range(t, b, e);
      for (int64_t r = b; r < e; ++r) totals[static_cast<size_t>(t)] += x[static_cast<size_t>(r)];
    }
    std::partial_sum(totals.begin(), totals.end(), totals.begin());
    for (int64_t t = 0; t < p.tiles; ++t) {
      int64_t b, e;
      p.tile_range(t, b, e);
      int64_t acc = t > 0 ? totals[static_cast<size_t>(t - 1)] : 0;
      for (int64_t r = b; r < e; ++r) got[static_cast<size_t>(r)] = acc += x[static_cast<size_t>(r)];
    }
    CHECK(got == want);
  }
  SECTION("one very long line: warp tiles") {
    const int64_t shape[] = {1 << 20}, st[] = {1};
    REQUIRE(plan_scan(1, shape, st, st, 0, 132, p));
    CHECK(p.num_lines == 1);
    CHECK(p.tiles == (int64_t{1} << 20) / p.tile_len);
    CHECK(p.tile_len % 32 == 0);
  }
  SECTION("a 0-d tensor scans as one element") {
    REQUIRE(plan_scan(0, nullptr, nullptr, nullptr, 0, 132, p));
    CHECK(p.num_lines == 1);
    CHECK(p.len == 1);
  }
}
