// The own convolution kernels' per-element math (kernels/conv_direct_ops.cuh)
// on the host, against a naive reference written the other way round: one
// scatter loop over (n, o, oh, ow, c, kh, kw) in double that adds each
// product to y, x's gradient and w's gradient at once. Groups, stride,
// padding, dilation, non-square kernels, conv1d-like rows, strided (channels
// last, transposed, reversed, broadcast) operands, float and double; and the
// backward filter's block split, reduced as the kernel reduces it; empty
// sums; conv_plan.hpp's shape_problem, which these kernels decline by.
// Built by nvcc as a host program (no launches).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "kernels/conv_direct_ops.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace loom::cuda::conv;
using loom::cuda::opmath_t;

namespace {

// How an operand's four dims lie in memory. Broadcast repeats the batch
// (stride 0) and only suits inputs.
enum class Layout { Contiguous, ChannelsLast, Transposed, Reversed, Broadcast };

// A 4-D operand of type T over its own buffer, at the given layout.
template <class T>
struct Tensor {
  Dims4 dims;
  std::vector<T> buffer;
  int64_t origin;  // element [0, 0, 0, 0]'s place in buffer (past reversed dims' elements)

  Tensor(int64_t n, int64_t c, int64_t h, int64_t w, Layout layout) : dims{{n, c, h, w}, {}}, origin(0) {
    const int64_t by_layout[5][4] = {{c * h * w, h * w, w, 1},
                                     {h * w * c, 1, w * c, c},
                                     {c * h * w, h * w, 1, h},
                                     {c * h * w, h * w, w, -1},
                                     {0, h * w, w, 1}};
    int64_t extent = 1;
    for (int i = 0; i < 4; ++i) {
      dims.stride[i] = by_layout[static_cast<int>(layout)][i];
      const int64_t reach = (dims.size[i] - 1) * std::abs(dims.stride[i]);
      if (dims.size[i] > 0) extent += reach;
      if (dims.stride[i] < 0 && dims.size[i] > 0) origin += reach;
    }
    // NaN marks elements nobody wrote (outputs start out as it).
    buffer.assign(static_cast<size_t>(extent), static_cast<T>(std::nan("")));
  }
  int64_t numel() const { return dims.size[0] * dims.size[1] * dims.size[2] * dims.size[3]; }
  T* data() { return buffer.data() + origin; }
  T& at(int64_t a, int64_t b, int64_t c, int64_t d) {
    return data()[a * dims.stride[0] + b * dims.stride[1] + c * dims.stride[2] + d * dims.stride[3]];
  }
  // Deterministic values in [-1, 1], exact in float.
  void fill(int64_t seed) {
    for (int64_t a = 0; a < dims.size[0]; ++a)
      for (int64_t b = 0; b < dims.size[1]; ++b)
        for (int64_t c = 0; c < dims.size[2]; ++c)
          for (int64_t d = 0; d < dims.size[3]; ++d) {
            const uint64_t h = static_cast<uint64_t>((((a * 31 + b) * 37 + c) * 41 + d) * 7 + seed) * 2654435761u;
            at(a, b, c, d) = static_cast<T>(static_cast<double>(static_cast<int64_t>(h % 17) - 8) / 8.0);
          }
  }
};

struct Case {
  int64_t N, C, H, W, O, KH, KW, stride[2], padding[2], dilation[2], groups;
};

Problem problem_of(const Case& k, const Dims4& x, const Dims4& w, const Dims4& y, Pass pass) {
  Problem p;
  p.pass = pass;
  p.x = x, p.w = w, p.y = y;
  for (int i = 0; i < 2; ++i) p.stride[i] = k.stride[i], p.padding[i] = k.padding[i], p.dilation[i] = k.dilation[i];
  p.groups = k.groups;
  return p;
}

// The three passes' results for given x, w and y (y doubles as the
// gradient the backward passes read), from one scatter over every product.
struct Reference {
  std::vector<double> y, x_grad, w_grad;  // row-major over each operand's sizes
};

template <class T>
Reference naive(const Case& k, Tensor<T>& x, Tensor<T>& w, Tensor<T>& y) {
  const int64_t OH = y.dims.size[2], OW = y.dims.size[3], Cg = k.C / k.groups, Og = k.O / k.groups;
  Reference r{std::vector<double>(static_cast<size_t>(y.numel())),
              std::vector<double>(static_cast<size_t>(x.numel())),
              std::vector<double>(static_cast<size_t>(w.numel()))};
  for (int64_t n = 0; n < k.N; ++n)
    for (int64_t o = 0; o < k.O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < k.KH; ++kh)
              for (int64_t kw = 0; kw < k.KW; ++kw) {
                const int64_t ih = oh * k.stride[0] - k.padding[0] + kh * k.dilation[0];
                const int64_t iw = ow * k.stride[1] - k.padding[1] + kw * k.dilation[1];
                if (ih < 0 || ih >= k.H || iw < 0 || iw >= k.W) continue;
                const int64_t ci = o / Og * Cg + c;
                const double xv = static_cast<double>(x.at(n, ci, ih, iw));
                const double wv = static_cast<double>(w.at(o, c, kh, kw));
                const double yv = static_cast<double>(y.at(n, o, oh, ow));
                r.y[static_cast<size_t>(((n * k.O + o) * OH + oh) * OW + ow)] += xv * wv;
                r.x_grad[static_cast<size_t>(((n * k.C + ci) * k.H + ih) * k.W + iw)] += yv * wv;
                r.w_grad[static_cast<size_t>(((o * Cg + c) * k.KH + kh) * k.KW + kw)] += yv * xv;
              }
  return r;
}

// Compares a written operand (read through its strides) with the reference
// plus an optional per-channel bias.
template <class T>
void check_against(Tensor<T>& got, const std::vector<double>& want, const std::vector<double>& bias, double tol) {
  int64_t i = 0;
  for (int64_t a = 0; a < got.dims.size[0]; ++a)
    for (int64_t b = 0; b < got.dims.size[1]; ++b)
      for (int64_t c = 0; c < got.dims.size[2]; ++c)
        for (int64_t d = 0; d < got.dims.size[3]; ++d, ++i) {
          const double expected = want[static_cast<size_t>(i)] + (bias.empty() ? 0.0 : bias[static_cast<size_t>(b)]);
          INFO("element " << a << "," << b << "," << c << "," << d);
          CHECK(std::abs(static_cast<double>(got.at(a, b, c, d)) - expected) <= tol * (1 + std::abs(expected)));
        }
}

// The backward filter's sum for weight element i as a block of `threads`
// (a power of two) computes it: strided partial sums, then halving.
template <class T>
opmath_t<T> block_sum(const Problem& p, int64_t i, const T* x, const T* y, int threads) {
  std::vector<opmath_t<T>> partial(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    partial[static_cast<size_t>(t)] = backward_filter_partial(p, i, x, y, t, backward_filter_terms(p), threads);
  for (int half = threads / 2; half > 0; half /= 2)
    for (int t = 0; t < half; ++t) partial[static_cast<size_t>(t)] += partial[static_cast<size_t>(t + half)];
  return partial[0];
}

// Runs all three passes for one case and layout triple (x, w, y) and checks
// them; a broadcast layout is swapped for a contiguous one where the pass
// writes the operand.
template <class T>
void check_case(const Case& k, Layout lx, Layout lw, Layout ly, double tol) {
  const int64_t OH = forward_output_size(k.H, k.KH, k.stride[0], k.padding[0], k.dilation[0]);
  const int64_t OW = forward_output_size(k.W, k.KW, k.stride[1], k.padding[1], k.dilation[1]);
  const auto writable = [](Layout l) { return l == Layout::Broadcast ? Layout::Contiguous : l; };
  Tensor<T> x(k.N, k.C, k.H, k.W, lx), w(k.O, k.C / k.groups, k.KH, k.KW, lw), y(k.N, k.O, OH, OW, ly);
  x.fill(1), w.fill(2), y.fill(3);
  const Reference ref = naive(k, x, w, y);
  // A bias read with stride 2 from every other element of its buffer.
  std::vector<T> bias_buffer(static_cast<size_t>(2 * std::max(k.O, k.C)));
  for (size_t i = 0; i < bias_buffer.size(); ++i) bias_buffer[i] = static_cast<T>(static_cast<double>(i % 5) / 4 - 0.5);
  const Bias<T> bias{bias_buffer.data(), 2}, none{nullptr, 0};
  const auto bias_values = [&](int64_t channels) {
    std::vector<double> v;
    for (int64_t c = 0; c < channels; ++c) v.push_back(static_cast<double>(bias_buffer[static_cast<size_t>(2 * c)]));
    return v;
  };

  {
    INFO("forward, with and without bias");
    Tensor<T> out(k.N, k.O, OH, OW, writable(ly));
    const Problem p = problem_of(k, x.dims, w.dims, out.dims, Pass::Forward);
    for (int64_t i = 0; i < out.numel(); ++i) forward_element(p, i, x.data(), w.data(), none, out.data());
    check_against(out, ref.y, {}, tol);
    for (int64_t i = 0; i < out.numel(); ++i) forward_element(p, i, x.data(), w.data(), bias, out.data());
    check_against(out, ref.y, bias_values(k.O), tol);
  }
  {
    INFO("backward data, with and without bias (conv_transpose2d's)");
    Tensor<T> out(k.N, k.C, k.H, k.W, writable(lx));
    const Problem p = problem_of(k, out.dims, w.dims, y.dims, Pass::BackwardData);
    for (int64_t i = 0; i < out.numel(); ++i) backward_data_element(p, i, y.data(), w.data(), none, out.data());
    check_against(out, ref.x_grad, {}, tol);
    for (int64_t i = 0; i < out.numel(); ++i) backward_data_element(p, i, y.data(), w.data(), bias, out.data());
    check_against(out, ref.x_grad, bias_values(k.C), tol);
  }
  {
    INFO("backward filter, summed by blocks of any size");
    Tensor<T> out(k.O, k.C / k.groups, k.KH, k.KW, writable(lw));
    const Problem p = problem_of(k, x.dims, out.dims, y.dims, Pass::BackwardFilter);
    for (const int threads : {1, 2, 32, 64, 256}) {
      INFO("threads " << threads);
      for (int64_t i = 0; i < out.numel(); ++i)
        out.data()[offset_of(p.w, unflatten(p.w, i))] = static_cast<T>(block_sum(p, i, x.data(), y.data(), threads));
      check_against(out, ref.w_grad, {}, tol);
    }
  }
}

const Case kCases[] = {
    // N  C  H   W  O  KH KW  stride  padding dilation groups
    {2, 4, 7, 6, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1},
    {2, 4, 9, 7, 6, 3, 2, {2, 2}, {1, 0}, {1, 1}, 2},   // groups 2, stride 2, non-square kernel
    {1, 3, 8, 9, 2, 2, 3, {1, 2}, {2, 1}, {2, 2}, 1},   // dilation 2
    {2, 2, 1, 12, 4, 1, 3, {1, 2}, {0, 1}, {1, 2}, 2},  // conv1d-like: one row
    {1, 6, 6, 5, 6, 2, 3, {2, 1}, {0, 1}, {1, 1}, 3},   // 3 groups, uneven stride
    {1, 2, 10, 8, 2, 4, 1, {3, 3}, {1, 0}, {2, 1}, 1},  // stride 3 skips rows; taps land on remainders
    {2, 2, 5, 5, 4, 5, 5, {1, 1}, {2, 2}, {1, 1}, 2},   // kernel as large as the input
};

struct Layouts {
  Layout x, w, y;
};
const Layouts kLayouts[] = {
    {Layout::Contiguous, Layout::Contiguous, Layout::Contiguous},
    {Layout::ChannelsLast, Layout::ChannelsLast, Layout::ChannelsLast},
    {Layout::Transposed, Layout::Transposed, Layout::Contiguous},
    {Layout::Reversed, Layout::Contiguous, Layout::Transposed},
    {Layout::Contiguous, Layout::Reversed, Layout::ChannelsLast},
    {Layout::Broadcast, Layout::ChannelsLast, Layout::Broadcast},
};

// Every case in every layout triple, in T.
template <class T>
void check_all_cases(double tolerance) {
  for (const Case& k : kCases)
    for (const Layouts& l : kLayouts) {
      INFO("case " << k.N << "x" << k.C << "x" << k.H << "x" << k.W << " O " << k.O << " kernel " << k.KH << "x"
                   << k.KW << " groups " << k.groups << " layouts " << static_cast<int>(l.x) << static_cast<int>(l.w)
                   << static_cast<int>(l.y));
      check_case<T>(k, l.x, l.w, l.y, tolerance);
    }
}

}  // namespace

TEST_CASE("direct convolution passes match a naive scatter loop (double)", "[conv]") {
  check_all_cases<double>(1e-12);
}

TEST_CASE("direct convolution passes match a naive scatter loop (float)", "[conv]") {
  check_all_cases<float>(1e-5);
}

TEST_CASE("a long backward-filter sum splits among any number of threads", "[conv]") {
  // 4 x 32 x 32 = 4096 terms per weight element: every thread of a 256-block
  // gets a share; the strided shares add up to the whole sum.
  const Case k{4, 2, 32, 32, 2, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1};
  Tensor<double> x(k.N, k.C, k.H, k.W, Layout::ChannelsLast), w(k.O, k.C, k.KH, k.KW, Layout::Contiguous),
      y(k.N, k.O, 32, 32, Layout::Contiguous);
  x.fill(5), w.fill(6), y.fill(7);
  const Reference ref = naive(k, x, w, y);
  const Problem p = problem_of(k, x.dims, w.dims, y.dims, Pass::BackwardFilter);
  REQUIRE(backward_filter_terms(p) == 4096);
  for (int64_t i = 0; i < w.numel(); ++i) {
    for (const int threads : {1, 32, 128, 256}) CHECK(std::abs(block_sum(p, i, x.data(), y.data(), threads) -
                                                               ref.w_grad[static_cast<size_t>(i)]) <= 1e-9);
    // Uneven shares (3 threads, not a power of two) still cover every term once.
    double sum = 0;
    for (int t = 0; t < 3; ++t) sum += backward_filter_partial(p, i, x.data(), y.data(), t, 4096, 3);
    CHECK(std::abs(sum - ref.w_grad[static_cast<size_t>(i)]) <= 1e-9);
  }
}

TEST_CASE("empty sums give the bias or zero", "[conv]") {
  // No input channels: the forward's sum is empty, the output its bias.
  const Case k{1, 0, 3, 3, 2, 2, 2, {1, 1}, {0, 0}, {1, 1}, 1};
  Tensor<float> x(1, 0, 3, 3, Layout::Contiguous), w(2, 0, 2, 2, Layout::Contiguous), y(1, 2, 2, 2, Layout::Contiguous);
  const float bias_values[2] = {0.5f, -2.0f};
  const Problem fwd = problem_of(k, x.dims, w.dims, y.dims, Pass::Forward);
  for (int64_t i = 0; i < y.numel(); ++i) forward_element(fwd, i, x.data(), w.data(), Bias<float>{bias_values, 1}, y.data());
  for (int64_t i = 0; i < y.numel(); ++i) CHECK(y.data()[i] == bias_values[i / 4]);
  // No batch: each weight element's sum has no terms and is 0.
  const Case nb{0, 2, 3, 3, 2, 2, 2, {1, 1}, {0, 0}, {1, 1}, 1};
  Tensor<float> x0(0, 2, 3, 3, Layout::Contiguous), w0(2, 2, 2, 2, Layout::Contiguous), y0(0, 2, 2, 2, Layout::Contiguous);
  const Problem filter = problem_of(nb, x0.dims, w0.dims, y0.dims, Pass::BackwardFilter);
  REQUIRE(backward_filter_terms(filter) == 0);
  for (int64_t i = 0; i < w0.numel(); ++i) CHECK(block_sum(filter, i, x0.data(), y0.data(), 32) == 0.0f);
}

TEST_CASE("source_output inverts the forward's window positions", "[conv]") {
  // For every input position and tap, the output it comes from (if any)
  // reads exactly that position through that tap.
  for (int64_t s = 1; s <= 3; ++s)
    for (int64_t d = 1; d <= 2; ++d)
      for (int64_t p = 0; p <= 2; ++p)
        for (int64_t k = 0; k < 3; ++k)
          for (int64_t in = 0; in < 8; ++in) {
            const int64_t out_size = forward_output_size(8, 3, s, p, d);
            const int64_t o = source_output(in, k, s, p, d, out_size);
            int64_t expected = -1;
            for (int64_t cand = 0; cand < out_size; ++cand)
              if (cand * s - p + k * d == in) expected = cand;
            INFO("s " << s << " d " << d << " p " << p << " k " << k << " in " << in);
            CHECK(o == expected);
          }
}

TEST_CASE("shape_problem checks the shapes but not cuDNN's int range", "[conv]") {
  // A batch past INT_MAX: fine for the own kernels (64-bit offsets), not for cuDNN.
  const int64_t huge = int64_t{3} << 30;
  const Case k{huge, 2, 4, 4, 2, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1};
  const Dims4 x{{huge, 2, 4, 4}, {32, 16, 4, 1}}, w{{2, 2, 3, 3}, {18, 9, 3, 1}}, y{{huge, 2, 4, 4}, {32, 16, 4, 1}};
  Problem p = problem_of(k, x, w, y, Pass::Forward);
  CHECK(shape_problem(p) == nullptr);
  CHECK(decline_reason(p) != nullptr);
  // The kernels divide by the stride: zero is refused, as is a mismatched output.
  p.stride[1] = 0;
  CHECK(shape_problem(p) != nullptr);
  p.stride[1] = 1;
  p.y.size[3] = 5;
  CHECK(shape_problem(p) != nullptr);
}
