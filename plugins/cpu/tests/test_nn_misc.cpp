// The pad, embedding and dropout kernels against naive loops: every dtype, strided
// inputs and outputs, large shapes that take the parallel path, and the
// kernel's own argument checks.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <loom/plugin/philox.hpp>

#include <cmath>
#include <cstring>

using namespace loom_test;

namespace {

LoomValue mode_value(const char* s) {  // s must outlive the call
  LoomValue v{};
  v.kind = LOOM_VALUE_STRING;
  v.u.str.data = s;
  v.u.str.size = static_cast<int64_t>(std::strlen(s));
  return v;
}

// Reference: the output index's source along one dim, -1 for the fill.
int64_t ref_source(int mode, int64_t o, int64_t before, int64_t n) {
  const int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  if (mode == 0) return -1;
  if (mode == 1) return i < 0 ? -i : 2 * (n - 1) - i;
  return i < 0 ? 0 : n - 1;
}

const char* const kModes[] = {"constant", "reflect", "replicate"};

// Runs pad on `in` with per-dim pairs and checks every output element.
void check_pad(const Tensor& in, const std::vector<int64_t>& pairs, int mode, Tensor out,
               double fill = 0) {
  run("pad", {in.desc()}, {out.desc()},
      {int_list_value(pairs), mode_value(kModes[mode]), float_value(fill)});
  long double want_fill = 0;
  {
    Tensor one = make(in.dtype, {});
    set(one, {}, fill);
    want_fill = get(one, {});
  }
  int64_t bad = 0;
  for_each_index(out.shape, [&](const std::vector<int64_t>& o) {
    std::vector<int64_t> src(o.size());
    bool is_fill = false;
    for (size_t d = 0; d < o.size(); ++d) {
      src[d] = ref_source(mode, o[d], pairs[2 * d], in.shape[d]);
      is_fill |= src[d] < 0;
    }
    const long double want = is_fill ? want_fill : get(in, src);
    if (get(out, o) != want && bad++ < 5) FAIL_CHECK("mismatch at an output element");
  });
  CHECK(bad == 0);
}

std::vector<int64_t> out_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& pairs) {
  std::vector<int64_t> s(in);
  for (size_t d = 0; d < s.size(); ++d) s[d] += pairs[2 * d] + pairs[2 * d + 1];
  return s;
}

}  // namespace

TEST_CASE("pad kernel: every mode and dtype against a naive loop", "[nn_misc]") {
  for (int32_t dt : all_dtypes()) {
    for (int mode = 0; mode < 3; ++mode) {
      INFO("dtype " << dt << " mode " << kModes[mode]);
      Tensor in = make(dt, {2, 5, 6});
      fill_pattern(in, mode);
      const std::vector<int64_t> pairs = {0, 0, 2, 4, 3, 1};
      check_pad(in, pairs, mode, make(dt, out_shape(in.shape, pairs)), 3);
      // Negative pads crop (mixed with positive ones).
      const std::vector<int64_t> crop = {0, 0, -2, 3, 4, -1};
      check_pad(in, crop, mode, make(dt, out_shape(in.shape, crop)), 1);
    }
  }
}

TEST_CASE("pad kernel: strided input and output, 0-d, empty", "[nn_misc]") {
  Tensor base = make(LOOM_DTYPE_FLOAT32, {4, 7, 9});
  fill_pattern(base);
  Tensor in = slice(transpose(base, 1, 2), 1, 1, 6, 1);  // [4, 6, 7], inner stride 9
  for (int mode = 0; mode < 3; ++mode) {
    const std::vector<int64_t> pairs = {1, 0, 3, 2, 5, 6};
    const auto os = out_shape(in.shape, pairs);
    Tensor big = make(LOOM_DTYPE_FLOAT32, {os[0], os[2], os[1]});
    check_pad(in, pairs, mode, transpose(big, 1, 2));  // strided output
  }
  Tensor s = make(LOOM_DTYPE_INT64, {});
  set(s, {}, 42);
  Tensor so = make(LOOM_DTYPE_INT64, {});
  run("pad", {s.desc()}, {so.desc()}, {int_list_value({}), mode_value("constant"), float_value(0)});
  CHECK(get(so, {}) == 42);
  Tensor e = make(LOOM_DTYPE_FLOAT32, {0, 3});
  check_pad(e, {0, 0, 2, 2}, 1, make(LOOM_DTYPE_FLOAT32, {0, 7}));
}

TEST_CASE("pad kernel: large inputs take the parallel path", "[nn_misc]") {
  Tensor in = make(LOOM_DTYPE_FLOAT64, {3, 130, 257});
  fill_pattern(in, 4);
  for (int mode = 0; mode < 3; ++mode) {
    const std::vector<int64_t> pairs = {1, 1, 7, 9, 11, 13};
    check_pad(in, pairs, mode, make(LOOM_DTYPE_FLOAT64, out_shape(in.shape, pairs)), -2);
  }
  Tensor narrow_rows = make(LOOM_DTYPE_FLOAT32, {20000, 2});  // many short rows
  fill_pattern(narrow_rows, 2);
  check_pad(narrow_rows, {0, 0, 1, 1}, 1, make(LOOM_DTYPE_FLOAT32, {20000, 4}));
}

TEST_CASE("pad kernel rejects inconsistent arguments", "[nn_misc]") {
  Tensor in = make(LOOM_DTYPE_FLOAT32, {2, 3});
  Tensor out = make(LOOM_DTYPE_FLOAT32, {2, 5});
  const auto pad = [&](std::vector<int64_t> pairs, const char* mode, const Tensor& o) {
    return status_of("pad", {in.desc()}, {o.desc()},
                     {int_list_value(std::move(pairs)), mode_value(mode), float_value(0)});
  };
  CHECK(pad({0, 0, 1, 1}, "reflect", out) == LOOM_STATUS_OK);
  CHECK(pad({0, 0, 1}, "reflect", out) == LOOM_STATUS_INVALID_ARGUMENT);        // pair count
  CHECK(pad({0, 0, 1, 2}, "reflect", out) == LOOM_STATUS_INVALID_ARGUMENT);     // size mismatch
  CHECK(pad({0, 0, 3, -1}, "reflect", out) == LOOM_STATUS_INVALID_ARGUMENT);    // reflect reaches out
  CHECK(pad({0, 0, 1, 1}, "circular", out) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(pad({0, 0, 1, 1}, "constant", make(LOOM_DTYPE_FLOAT64, {2, 5})) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor empty = make(LOOM_DTYPE_FLOAT32, {2, 0});
  CHECK(status_of("pad", {empty.desc()}, {make(LOOM_DTYPE_FLOAT32, {2, 2}).desc()},
                  {int_list_value({0, 0, 1, 1}), mode_value("replicate"), float_value(0)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);  // nothing to replicate
}

TEST_CASE("embedding kernel: every dtype, both index dtypes, strides", "[nn_misc]") {
  for (int32_t dt : all_dtypes()) {
    for (int32_t it : {LOOM_DTYPE_INT64, LOOM_DTYPE_INT32}) {
      INFO("dtype " << dt << " index dtype " << it);
      Tensor wb = make(dt, {5, 7});
      fill_pattern(wb, 1);
      Tensor w = transpose(make(dt, {7, 5}), 0, 1);  // [5, 7] with strides (1, 5)
      for_each_index(w.shape, [&](const std::vector<int64_t>& i) { set(w, i, get(wb, i)); });
      Tensor ib = make(it, {4, 3});
      int64_t k = 0;
      for_each_index(ib.shape, [&](const std::vector<int64_t>& i) { set(ib, i, (k++ * 3) % 5); });
      Tensor idx = transpose(ib, 0, 1);  // [3, 4]
      Tensor out = make(dt, {3, 4, 7});
      run("embedding", {w.desc(), idx.desc()}, {out.desc()}, {LoomValue{}});
      for_each_index(out.shape, [&](const std::vector<int64_t>& o) {
        const auto row = static_cast<int64_t>(get(idx, {o[0], o[1]}));
        CHECK(get(out, o) == get(wb, {row, o[2]}));
      });
    }
  }
}

TEST_CASE("embedding kernel: large gather and bad indices", "[nn_misc]") {
  Tensor w = make(LOOM_DTYPE_FLOAT32, {1000, 64});
  fill_pattern(w, 5);
  Tensor idx = make(LOOM_DTYPE_INT64, {5000});
  for (int64_t i = 0; i < 5000; ++i) set(idx, {i}, (i * 7919) % 1000);
  Tensor out = make(LOOM_DTYPE_FLOAT32, {5000, 64});
  run("embedding", {w.desc(), idx.desc()}, {out.desc()}, {LoomValue{}});
  int64_t bad = 0;
  for_each_index(out.shape, [&](const std::vector<int64_t>& o) {
    bad += get(out, o) != get(w, {(o[0] * 7919) % 1000, o[1]});
  });
  CHECK(bad == 0);

  Tensor small = make(LOOM_DTYPE_INT32, {2});
  set(small, {0}, 1);
  set(small, {1}, 1000);
  LoomError* e = call("embedding", {w.desc(), small.desc()}, {make(LOOM_DTYPE_FLOAT32, {2, 64}).desc()}, {LoomValue{}});
  REQUIRE(e != nullptr);
  CHECK(e->code == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(std::string(e->message).find("index 1000 is out of range for num_embeddings 1000") != std::string::npos);
  e->destroy(e);
  Tensor fidx = make(LOOM_DTYPE_FLOAT32, {2});
  CHECK(status_of("embedding", {w.desc(), fidx.desc()}, {make(LOOM_DTYPE_FLOAT32, {2, 64}).desc()},
                  {LoomValue{}}) == LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("embedding", {w.desc(), idx.desc()}, {make(LOOM_DTYPE_FLOAT32, {5000, 63}).desc()},
                  {LoomValue{}}) == LOOM_STATUS_INVALID_ARGUMENT);
}

TEST_CASE("dropout kernel: the uniform_ draw of each element decides, any strides", "[nn_misc]") {
  namespace lp = loom::plugin;
  const uint64_t seed = 1234567, offset = 99;
  for (int32_t dt : {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64}) {
    INFO("dtype " << dt);
    Tensor base = make(dt, {70, 300});
    fill_pattern(base, 3);
    Tensor in = transpose(base, 0, 1);  // [300, 70], strided; 21000 elements: parallel
    Tensor out = make(dt, {300, 70});
    const double p = 0.3;
    run("dropout", {in.desc()}, {out.desc()},
        {float_value(p), bool_value(true),
         int_list_value({static_cast<int64_t>(seed), static_cast<int64_t>(offset)})});
    Tensor scale_t = make(dt, {});
    set(scale_t, {}, 1.0L / 0.7L);
    const long double scale = get(scale_t, {});
    uint64_t index = 0;
    int64_t bad = 0, kept = 0;
    for_each_index(out.shape, [&](const std::vector<int64_t>& i) {
      const auto blk = lp::philox_for_element(seed, offset, index++);
      const bool keep = dt == LOOM_DTYPE_FLOAT64 ? lp::uniform_sample_f64(blk, 0, 1) < 0.7
                                                 : lp::uniform_sample_f32(blk, 0, 1) < 0.7f;
      kept += keep;
      Tensor want = make(dt, {});
      set(want, {}, keep ? get(in, i) * scale : 0);  // product rounded to the dtype
      if (get(out, i) != get(want, {}) && bad++ < 5) FAIL_CHECK("mismatch");
    });
    CHECK(bad == 0);
    CHECK(std::abs(kept - 14700) < 400);  // 21000 draws at 0.7: ~6 standard deviations
  }
  Tensor in = make(LOOM_DTYPE_FLOAT32, {4});
  Tensor out = make(LOOM_DTYPE_FLOAT32, {4});
  // p = 1 drops everything as input * 0 (NaN stays NaN); p > 1 is refused.
  for (int64_t i = 0; i < 4; ++i) set(in, {i}, i == 2 ? std::nan("") : 1.0 + static_cast<double>(i));
  CHECK(status_of("dropout", {in.desc()}, {out.desc()},
                  {float_value(1.0), bool_value(true), int_list_value({1, 0})}) == LOOM_STATUS_OK);
  CHECK(get(out, {0}) == 0);
  CHECK(std::isnan(static_cast<double>(get(out, {2}))));
  CHECK(status_of("dropout", {in.desc()}, {out.desc()},
                  {float_value(1.5), bool_value(true), int_list_value({1, 0})}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  CHECK(status_of("dropout", {in.desc()}, {out.desc()}, {float_value(0.5), bool_value(true), LoomValue{}}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
  Tensor iin = make(LOOM_DTYPE_INT32, {4});
  Tensor iout = make(LOOM_DTYPE_INT32, {4});
  CHECK(status_of("dropout", {iin.desc()}, {iout.desc()},
                  {float_value(0.5), bool_value(true), int_list_value({1, 0})}) != LOOM_STATUS_OK);
}
