// samples_conv_pool.cpp — conv1d, conv2d, conv_transpose2d, the conv2d
// gradient ops, max_pool2d,
// max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d: stride,
// padding, dilation, groups, output_padding, ceil_mode, count_include_pad,
// divisor_override, unbatched inputs.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

// Convolutions sum C*k*k products: tolerance for the larger ones.
Sample wide(Sample s) {
  s.atol = 1e-4, s.rtol = 1e-4;
  return s;
}

LOOM_OP_SAMPLES("conv1d", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return Samples{c.call("basic", {c.tensor({2, 3, 10}), c.tensor({4, 3, 3})}),
                     c.call("bias, stride 2, padding 1", {c.tensor({2, 3, 10}), c.tensor({4, 3, 3}), c.tensor({4})}, {L({2}), L({1})}),
                     c.call("dilation 2", {c.tensor({1, 2, 12}), c.tensor({3, 2, 3}), std::nullopt}, {L({1}), L({0}), L({2})}),
                     c.call("groups 2", {c.tensor({2, 4, 8}), c.tensor({6, 2, 3}), c.tensor({6})}, {L({1}), L({1}), L({1}), I(2)}),
                     c.call("unbatched", {c.tensor({3, 7}), c.tensor({2, 3, 2})}),
                     c.call("empty batch", {c.tensor({0, 3, 10}), c.tensor({4, 3, 3})}),
                     wide(c.call("large", {c.tensor({4, 32, 512}, -1, 1), c.tensor({32, 32, 5}, -1, 1), c.tensor({32})}, {L({1}), L({2})}))};
    }})

LOOM_OP_SAMPLES("conv2d", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return Samples{c.call("basic", {c.tensor({2, 3, 7, 7}), c.tensor({4, 3, 3, 3})}),
                     c.call("bias, stride (2,1), padding (1,2)", {c.tensor({2, 3, 7, 8}), c.tensor({4, 3, 3, 3}), c.tensor({4})}, {L({2, 1}), L({1, 2})}),
                     c.call("dilation 2", {c.tensor({1, 2, 9, 9}), c.tensor({3, 2, 3, 3}), std::nullopt}, {L({1}), L({0}), L({2})}),
                     c.call("depthwise (groups = C)", {c.tensor({2, 4, 6, 6}), c.tensor({4, 1, 3, 3}), c.tensor({4})}, {L({1}), L({1}), L({1}), I(4)}),
                     c.call("1x1 kernel", {c.tensor({2, 5, 4, 4}), c.tensor({3, 5, 1, 1})}),
                     c.call("unbatched, non-square kernel", {c.tensor({3, 6, 7}), c.tensor({2, 3, 2, 4})}),
                     c.call("empty batch", {c.tensor({0, 3, 5, 5}), c.tensor({4, 3, 3, 3})}),
                     wide(c.call("large", {c.tensor({2, 16, 64, 64}, -1, 1), c.tensor({16, 16, 3, 3}, -1, 1), c.tensor({16})}, {L({1}), L({1})}))};
    }})

LOOM_OP_SAMPLES("conv_transpose2d", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      // (input, weight [C_in, C_out/groups, kH, kW], bias, stride, padding,
      // output_padding, groups, dilation)
      return Samples{c.call("basic", {c.tensor({2, 3, 5, 5}), c.tensor({3, 4, 3, 3})}),
                     c.call("bias, stride 2, padding 1, output_padding 1", {c.tensor({2, 3, 4, 4}), c.tensor({3, 2, 3, 3}), c.tensor({2})},
                            {L({2}), L({1}), L({1})}),
                     c.call("groups 2", {c.tensor({1, 4, 5, 5}), c.tensor({4, 3, 2, 2}), c.tensor({6})}, {L({1}), L({0}), L({0}), I(2)}),
                     c.call("dilation 2", {c.tensor({1, 2, 4, 4}), c.tensor({2, 3, 3, 3}), std::nullopt}, {L({1}), L({0}), L({0}), I(1), L({2})}),
                     c.call("unbatched", {c.tensor({3, 4, 4}), c.tensor({3, 2, 2, 2})}),
                     wide(c.call("large", {c.tensor({2, 16, 32, 32}, -1, 1), c.tensor({16, 8, 4, 4}, -1, 1), c.tensor({8})}, {L({2}), L({1})}))};
    }})

// The gradient ops: (grad_output [N, O, OH, OW], weight or input, size,
// stride, padding, dilation, groups), shapes those of a forward conv2d.
LOOM_OP_SAMPLES("_conv2d_backward_input", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return Samples{c.call("basic", {c.tensor({2, 4, 5, 5}), c.tensor({4, 3, 3, 3})}, {L({7, 7})}),
                     c.call("stride 2, padding 1, odd width", {c.tensor({2, 4, 4, 4}), c.tensor({4, 3, 3, 3})}, {L({7, 8}), L({2}), L({1})}),
                     c.call("stride 3 skips trailing rows", {c.tensor({1, 2, 2, 2}), c.tensor({2, 2, 3, 3})}, {L({8, 8}), L({3})}),
                     c.call("dilation 2", {c.tensor({1, 3, 5, 5}), c.tensor({3, 2, 3, 3})}, {L({9, 9}), L({1}), L({0}), L({2})}),
                     c.call("groups 2", {c.tensor({2, 6, 6, 6}), c.tensor({6, 2, 3, 3})}, {L({6, 6}), L({1}), L({1}), L({1}), I(2)}),
                     c.call("depthwise", {c.tensor({2, 4, 6, 6}), c.tensor({4, 1, 3, 3})}, {L({6, 6}), L({1}), L({1}), L({1}), I(4)}),
                     c.call("empty batch", {c.tensor({0, 4, 5, 5}), c.tensor({4, 3, 3, 3})}, {L({7, 7})}),
                     wide(c.call("large", {c.tensor({2, 16, 32, 32}, -1, 1), c.tensor({16, 16, 3, 3}, -1, 1)}, {L({32, 32}), L({1}), L({1})}))};
    }})

LOOM_OP_SAMPLES("_conv2d_backward_weight", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return Samples{c.call("basic", {c.tensor({2, 4, 5, 5}), c.tensor({2, 3, 7, 7})}, {L({3, 3})}),
                     c.call("stride 2, padding 1, odd width", {c.tensor({2, 4, 4, 4}), c.tensor({2, 3, 7, 8})}, {L({3, 3}), L({2}), L({1})}),
                     c.call("dilation 2", {c.tensor({1, 3, 5, 5}), c.tensor({1, 2, 9, 9})}, {L({3, 3}), L({1}), L({0}), L({2})}),
                     c.call("groups 2", {c.tensor({2, 6, 6, 6}), c.tensor({2, 4, 6, 6})}, {L({3, 3}), L({1}), L({1}), L({1}), I(2)}),
                     c.call("one input channel", {c.tensor({4, 8, 8, 8}), c.tensor({4, 1, 8, 8})}, {L({3, 3}), L({1}), L({1})}),
                     c.call("grad_output shorter than the forward's", {c.tensor({1, 2, 3, 3}), c.tensor({1, 2, 9, 9})}, {L({3, 3}), L({2})}),
                     c.call("empty batch", {c.tensor({0, 4, 5, 5}), c.tensor({0, 3, 7, 7})}, {L({3, 3})}),
                     wide(c.call("large", {c.tensor({2, 16, 32, 32}, -1, 1), c.tensor({2, 16, 32, 32}, -1, 1)}, {L({3, 3}), L({1}), L({1})}))};
    }})

// max pooling: distinct values, so the index of the maximum is unique.
Samples max_pool_samples(const SampleContext& c) {
  Samples v{c.call("2x2", {c.distinct({2, 3, 6, 6})}, {L({2, 2})}),
            c.call("3x3 stride 2 padding 1", {c.distinct({1, 2, 7, 7})}, {L({3}), L({2}), L({1})}),
            c.call("non-square, stride (1,2)", {c.distinct({2, 2, 5, 6})}, {L({2, 3}), L({1, 2})}),
            c.call("dilation 2", {c.distinct({1, 2, 8, 8})}, {L({2}), L({1}), L({0}), L({2})}),
            c.call("ceil_mode", {c.distinct({1, 3, 7, 7})}, {L({2}), L({2}), L({0}), L({1}), B(true)}),
            c.call("unbatched", {c.distinct({3, 5, 5})}, {L({2})})};
  // Too many values to be distinct: only where random values hardly tie.
  if (c.dtype() == DType::Float32 || c.dtype() == DType::Float64)
    v.push_back(c.call("large", {c.tensor({4, 8, 34, 34})}, {L({2})}));
  if (is_float(c)) v.push_back(c.call("edge values (NaN wins)", {c.edge_values(64).reshape({1, 1, 8, 8})}, {L({2})}));
  return v;
}
LOOM_OP_SAMPLES("max_pool2d", {
    .dtypes = kFloatDTypes,
    .compare = Compare::Exact,
    .make = [](const SampleContext& c) { return max_pool_samples(c); }})
LOOM_OP_SAMPLES("max_pool2d_with_indices", {
    .dtypes = kFloatDTypes,
    .compare = Compare::Exact,
    .reference_in_double = false,
    .make = [](const SampleContext& c) { return max_pool_samples(c); }})

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode,
// count_include_pad, divisor_override)
LOOM_OP_SAMPLES("avg_pool2d", {
    .make = [](const SampleContext& c) {
      return Samples{c.call("2x2", {c.tensor({2, 3, 6, 6})}, {L({2, 2})}),
                     c.call("3x3 stride 2 padding 1", {c.tensor({1, 2, 7, 7})}, {L({3}), L({2}), L({1})}),
                     c.call("padding, count_include_pad=False", {c.tensor({1, 2, 7, 7})}, {L({3}), L({2}), L({1}), B(false), B(false)}),
                     c.call("ceil_mode", {c.tensor({1, 3, 7, 7})}, {L({2}), L({2}), L({0}), B(true)}),
                     c.call("divisor_override=3", {c.tensor({1, 2, 6, 6})}, {L({2}), L({2}), L({0}), B(false), B(true), I(3)}),
                     c.call("unbatched", {c.tensor({3, 5, 5})}, {L({2})}),
                     c.call("large", {c.tensor({4, 8, 34, 34})}, {L({2})})};
    }})

LOOM_OP_SAMPLES("adaptive_avg_pool2d", {
    .make = [](const SampleContext& c) {
      return Samples{c.call("to 1x1 (global)", {c.tensor({2, 3, 5, 5})}, {L({1, 1})}),
                     c.call("even split", {c.tensor({2, 3, 8, 8})}, {L({4, 2})}),
                     c.call("uneven windows", {c.tensor({1, 2, 7, 5})}, {L({3, 4})}),
                     c.call("upsampling", {c.tensor({1, 2, 2, 3})}, {L({4, 5})}),
                     c.call("unbatched", {c.tensor({3, 6, 6})}, {L({3})}),
                     c.call("large", {c.tensor({4, 8, 34, 34})}, {L({7, 7})})};
    }})

// upsample (interpolate): each mode, output sizes up and down, the user's
// scales (which move the sampled pixels), align_corners, every rank.
LOOM_OP_SAMPLES("upsample", {
    .make = [](const SampleContext& c) {
      const Value scales = Value(std::vector<double>{1.7, 0.6});
      Samples s{c.call("nearest x2", {c.tensor({2, 3, 4, 5})}, {L({8, 10})}),
                c.call("nearest down, uneven", {c.tensor({1, 2, 7, 9})}, {L({3, 4})}),
                c.call("nearest with scales", {c.tensor({1, 2, 5, 5})}, {L({8, 3}), S("nearest"), B(false), scales}),
                c.call("nearest 1-d", {c.tensor({2, 3, 6})}, {L({11})}),
                c.call("nearest 3-d", {c.tensor({1, 2, 3, 4, 2})}, {L({5, 4, 3})}),
                c.call("nearest-exact", {c.tensor({1, 2, 5, 7})}, {L({8, 3}), S("nearest-exact")})};
      if (is_float(c)) {
        s.push_back(c.call("bilinear up", {c.tensor({2, 3, 4, 5})}, {L({7, 9}), S("bilinear")}));
        s.push_back(c.call("bilinear down", {c.tensor({1, 2, 9, 8})}, {L({4, 3}), S("bilinear")}));
        s.push_back(c.call("bilinear align_corners", {c.tensor({1, 2, 4, 5})}, {L({7, 9}), S("bilinear"), B(true)}));
        s.push_back(c.call("bilinear with scales", {c.tensor({1, 2, 5, 5})}, {L({8, 3}), S("bilinear"), B(false), scales}));
        s.push_back(c.call("linear", {c.tensor({2, 3, 6})}, {L({13}), S("linear")}));
        s.push_back(c.call("trilinear", {c.tensor({1, 2, 3, 4, 2})}, {L({5, 4, 3}), S("trilinear")}));
        s.push_back(c.call("area", {c.tensor({1, 2, 8, 6})}, {L({3, 4}), S("area")}));
        s.push_back(c.call("large bilinear", {c.tensor({4, 8, 34, 34})}, {L({68, 68}), S("bilinear")}));
      }
      return s;
    }})

}  // namespace
}  // namespace loom::opinfo
