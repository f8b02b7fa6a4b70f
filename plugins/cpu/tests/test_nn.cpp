// The nn kernels (softmax, log_softmax, layer_norm) through the fake host,
// against long-double references: every floating dtype, the row, column and
// strided layouts, row lengths around the vector widths, and bad calls.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <cmath>

using namespace loom_test;

namespace {

// softmax (or log_softmax) of `x` along dim, by loops in long double.
std::vector<long double> ref_softmax(const Tensor& x, int dim, bool log) {
  std::vector<long double> out(static_cast<size_t>(x.numel()));
  const std::vector<int64_t> cs = contiguous_strides(x.shape);
  std::vector<int64_t> line_shape = x.shape;
  line_shape[static_cast<size_t>(dim)] = 1;
  const int64_t n = x.shape[static_cast<size_t>(dim)];
  for_each_index(line_shape, [&](const std::vector<int64_t>& start) {
    std::vector<int64_t> idx = start;
    long double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < n; ++k) {
      idx[static_cast<size_t>(dim)] = k;
      m = std::max(m, get(x, idx));
    }
    for (int64_t k = 0; k < n; ++k) {
      idx[static_cast<size_t>(dim)] = k;
      s += std::exp(get(x, idx) - m);
    }
    for (int64_t k = 0; k < n; ++k) {
      idx[static_cast<size_t>(dim)] = k;
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * cs[d];
      const long double e = get(x, idx) - m;
      out[static_cast<size_t>(off)] = log ? e - std::log(s) : std::exp(e) / s;
    }
  });
  return out;
}

// Every element of y (read through its own strides) against want (row-major).
void check_against(const Tensor& y, const std::vector<long double>& want, double tol) {
  int64_t i = 0;
  for_each_index(y.shape, [&](const std::vector<int64_t>& idx) {
    const long double g = get(y, idx), w = want[static_cast<size_t>(i++)];
    INFO("element " << i - 1 << " got " << static_cast<double>(g) << " want " << static_cast<double>(w));
    CHECK(std::fabs(static_cast<double>(g - w)) <= tol * (1 + std::fabs(static_cast<double>(w))));
  });
}

double softmax_tol(int32_t dt) { return dt == LOOM_DTYPE_FLOAT64 ? 1e-14 : dt == LOOM_DTYPE_FLOAT32 ? 1e-6 : 2 * eps_of(dt); }

const std::vector<int32_t>& float_dtypes() {
  static const std::vector<int32_t> v{LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64};
  return v;
}

}  // namespace

TEST_CASE("softmax kernels: every dtype, layout and dim", "[nn][cpu]") {
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    for (int32_t dt : float_dtypes()) {
      for (int64_t len : {1, 7, 16, 33, 130}) {
        Tensor a = make(dt, {3, len, 5});
        fill_pattern(a, static_cast<int>(len));
        Tensor big = make(dt, {5, len + 2, 3});
        fill_pattern(big, 9);
        Tensor strided = slice(transpose(big, 0, 2), 1, 1, len);  // [3, len, 5], no unit strides
        for (int dim = 0; dim < 3; ++dim) {
          for (const Tensor* x : {&a, &strided}) {
            INFO(op << " dtype " << dt << " len " << len << " dim " << dim << (x == &a ? " contiguous" : " strided"));
            Tensor y = make(dt, x->shape);
            run(op, {x->desc()}, {y.desc()}, {int_value(dim)});
            check_against(y, ref_softmax(*x, dim, log), softmax_tol(dt));
            // Into a transposed (non-contiguous) output.
            Tensor yt = transpose(make(dt, {5, len, 3}), 0, 2);
            run(op, {x->desc()}, {yt.desc()}, {int_value(dim)});
            check_against(yt, ref_softmax(*x, dim, log), softmax_tol(dt));
          }
        }
      }
    }
  }
}

TEST_CASE("softmax kernels: large rows split across threads, columns across tiles", "[nn][cpu]") {
  Tensor rows = make(LOOM_DTYPE_FLOAT32, {64, 1031});
  fill_pattern(rows, 1);
  Tensor y = make(LOOM_DTYPE_FLOAT32, rows.shape);
  run("softmax", {rows.desc()}, {y.desc()}, {int_value(1)});
  check_against(y, ref_softmax(rows, 1, false), 1e-6);
  Tensor cols = make(LOOM_DTYPE_FLOAT32, {2, 300, 150});  // 150 columns: 3 tiles, the last partial
  fill_pattern(cols, 2);
  Tensor yc = make(LOOM_DTYPE_FLOAT32, cols.shape);
  run("log_softmax", {cols.desc()}, {yc.desc()}, {int_value(1)});
  check_against(yc, ref_softmax(cols, 1, true), 1e-6);
}

TEST_CASE("softmax kernels: exp accuracy over the whole float range", "[nn][cpu]") {
  // Two-element rows {0, -t}: softmax gives 1/(1+e^-t) and e^-t/(1+e^-t),
  // so each row checks the vector exp at -t, down to where it underflows.
  const int64_t n = 2000;
  Tensor x = make(LOOM_DTYPE_FLOAT32, {n, 2});
  for (int64_t i = 0; i < n; ++i) {
    set(x, {i, 0}, 0);
    set(x, {i, 1}, -static_cast<float>(i) * 0.045f);  // 0 .. -90
  }
  Tensor y = make(LOOM_DTYPE_FLOAT32, x.shape);
  run("softmax", {x.desc()}, {y.desc()}, {int_value(1)});
  for (int64_t i = 0; i < n; ++i) {
    const long double t = -get(x, {i, 1});
    const long double want = std::exp(-t) / (1 + std::exp(-t));
    const long double got = get(y, {i, 1});
    INFO("t = " << static_cast<double>(t));
    const bool close = std::fabs(static_cast<double>(got - want)) <= 6e-7 * static_cast<double>(want);
    if (t < 87.3L) CHECK(close);
    else CHECK((close || got == 0));  // at float's smallest normals: may flush to 0
  }
}

TEST_CASE("softmax kernels: bad calls", "[nn][cpu]") {
  Tensor a = make(LOOM_DTYPE_FLOAT32, {2, 3});
  Tensor y = make(LOOM_DTYPE_FLOAT32, {2, 3});
  CHECK(status_of("softmax", {a.desc()}, {y.desc()}, {int_value(2)}) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor wrong = make(LOOM_DTYPE_FLOAT32, {3, 2});
  CHECK(status_of("softmax", {a.desc()}, {wrong.desc()}, {int_value(0)}) == LOOM_STATUS_INVALID_ARGUMENT);
  Tensor ints = make(LOOM_DTYPE_INT64, {2, 3});
  CHECK(status_of("softmax", {ints.desc()}, {ints.desc()}, {int_value(0)}) != LOOM_STATUS_OK);
}

TEST_CASE("layer_norm kernel: every dtype, with and without affine", "[nn][cpu]") {
  for (int32_t dt : float_dtypes()) {
    for (int64_t n : {1, 5, 16, 37, 300}) {
      Tensor x = make(dt, {4, n});
      fill_pattern(x, static_cast<int>(n));
      Tensor w = make(dt, {n});
      fill_pattern(w, 3);
      Tensor b = make(dt, {n});
      fill_pattern(b, 4);
      for (int affine = 0; affine < 4; ++affine) {
        const bool hw = affine & 1, hb = affine & 2;
        LoomTensorDesc absent{};
        absent.struct_size = sizeof absent;
        absent.ndim = -1;
        Tensor y = make(dt, {4, n});
        const double eps = 1e-3;
        run("layer_norm", {x.desc(), hw ? w.desc() : absent, hb ? b.desc() : absent}, {y.desc()},
            {int_list_value({n}), float_value(eps)});
        for (int64_t r = 0; r < 4; ++r) {
          long double m = 0, v = 0;
          for (int64_t i = 0; i < n; ++i) m += get(x, {r, i});
          m /= n;
          for (int64_t i = 0; i < n; ++i) v += (get(x, {r, i}) - m) * (get(x, {r, i}) - m);
          v /= n;
          for (int64_t i = 0; i < n; ++i) {
            long double want = (get(x, {r, i}) - m) / std::sqrt(v + eps);
            if (hw) want *= get(w, {i});
            if (hb) want += get(b, {i});
            const double tol = dt == LOOM_DTYPE_FLOAT64 ? 1e-12 : dt == LOOM_DTYPE_FLOAT32 ? 2e-5 : 8 * eps_of(dt);
            INFO("dtype " << dt << " n " << n << " affine " << affine << " at " << r << "," << i);
            CHECK(std::fabs(static_cast<double>(get(y, {r, i}) - want)) <= tol * (1 + std::fabs(static_cast<double>(want))));
          }
        }
      }
    }
  }
  Tensor x = make(LOOM_DTYPE_FLOAT32, {2, 3});
  Tensor w = make(LOOM_DTYPE_FLOAT32, {4});
  Tensor y = make(LOOM_DTYPE_FLOAT32, {2, 3});
  CHECK(status_of("layer_norm", {x.desc(), w.desc(), w.desc()}, {y.desc()}, {int_list_value({3}), float_value(1e-5)}) ==
        LOOM_STATUS_INVALID_ARGUMENT);
}
