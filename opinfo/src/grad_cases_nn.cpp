// grad_cases_nn.cpp — gradcheck cases for the nn family (see loom/opinfo.h):
// convolution, pooling, softmax, attention, losses, normalisation, pad.
#include <loom/library.h>
#include <loom/opinfo.h>

#include <initializer_list>
#include <optional>
#include <tuple>

using loom::DType;
using loom::Tensor;
using namespace loom::opinfo;

// ---- convolution -------------------------------------------------------------------------

LOOM_GRAD_CASES("conv1d", [] {
  return std::vector<GradCase>{
      {"bias, stride, padding", {arg({2, 4, 7}), arg({3, 4, 3}), arg({3})},
       [](const Args& x) { return out(loom::conv1d(x[0], x[1], x[2], {2}, {1})); }},
      {"groups, dilation, strided input", {strided_arg({2, 4, 7}), arg({4, 2, 2})},
       [](const Args& x) { return out(loom::conv1d(x[0], x[1], std::nullopt, {1}, {0}, {3}, 2)); }},
      {"unbatched, padding same", {arg({2, 6}), arg({3, 2, 4}), arg({3})},
       [](const Args& x) { return out(loom::conv1d(x[0], x[1], x[2], {1}, "same")); }}};
})
LOOM_GRAD_CASES("conv2d", [] {
  return std::vector<GradCase>{
      {"bias, stride 2, padding 1", {arg({2, 3, 5, 6}), arg({2, 3, 3, 3}), arg({2})},
       [](const Args& x) { return out(loom::conv2d(x[0], x[1], x[2], {2}, {1})); }},
      {"groups, dilation, strided input", {strided_arg({2, 4, 5, 6}), arg({6, 2, 2, 3})},
       [](const Args& x) { return out(loom::conv2d(x[0], x[1], std::nullopt, {1, 2}, {0, 1}, {2, 1}, 2)); }},
      {"unbatched, strided weight", {arg({2, 5, 4}), strided_arg({2, 2, 3, 2}), arg({2})},
       [](const Args& x) { return out(loom::conv2d(x[0], x[1], x[2], {2, 1}, {1, 0})); }},
      {"padding same, even kernel", {arg({1, 2, 4, 5}), arg({2, 2, 2, 3})},
       [](const Args& x) { return out(loom::conv2d(x[0], x[1], std::nullopt, {1}, "same")); }}};
})
// The gradient ops differentiate through their composites (double backward
// of conv2d).
LOOM_GRAD_CASES("_conv2d_backward_input", [] {
  return std::vector<GradCase>{
      {"stride 2, padding 1, a row the stride skips", {arg({2, 2, 3, 3}), arg({2, 3, 3, 3})},
       [](const Args& x) { return out(loom::conv2d_backward_input(x[0], x[1], {6, 6}, {2}, {1})); }},
      {"groups, dilation", {arg({1, 4, 3, 4}), strided_arg({4, 1, 2, 2})},
       [](const Args& x) { return out(loom::conv2d_backward_input(x[0], x[1], {5, 4}, {1}, {0, 1}, {2, 2}, 2)); }}};
})
LOOM_GRAD_CASES("_conv2d_backward_weight", [] {
  return std::vector<GradCase>{
      {"stride 2, padding 1", {arg({2, 2, 3, 3}), arg({2, 3, 6, 6})},
       [](const Args& x) { return out(loom::conv2d_backward_weight(x[0], x[1], {3, 3}, {2}, {1})); }},
      {"groups, strided input, short grad_output", {arg({1, 4, 2, 3}), strided_arg({1, 2, 5, 4})},
       [](const Args& x) { return out(loom::conv2d_backward_weight(x[0], x[1], {2, 2}, {2, 1}, {0}, {1}, 2)); }}};
})
LOOM_GRAD_CASES("conv_transpose2d", [] {
  return std::vector<GradCase>{
      {"bias, stride 2, padding, output_padding", {arg({2, 3, 3, 4}), arg({3, 2, 3, 3}), arg({2})},
       [](const Args& x) { return out(loom::conv_transpose2d(x[0], x[1], x[2], {2}, {1}, {1})); }},
      {"groups, dilation, strided input", {strided_arg({2, 4, 3, 3}), arg({4, 1, 2, 2})},
       [](const Args& x) { return out(loom::conv_transpose2d(x[0], x[1], std::nullopt, {1, 2}, {0}, {0, 1}, 2, {2, 1})); }},
      {"unbatched, output_padding past the stride", {arg({2, 3, 3}), arg({2, 2, 2, 2}), arg({2})},
       [](const Args& x) { return out(loom::conv_transpose2d(x[0], x[1], x[2], {1}, {0}, {1}, 1, {2})); }}};
})

// ---- pooling -----------------------------------------------------------------------------
// Random inputs have no ties within a window (finite differences would
// break them).

LOOM_GRAD_CASES("max_pool2d", [] {
  return std::vector<GradCase>{
      {"kernel 2", {arg({2, 2, 4, 4})}, [](const Args& x) { return out(loom::max_pool2d(x[0], {2})); }},
      {"overlapping, padding, strided", {strided_arg({2, 2, 5, 5})},
       [](const Args& x) { return out(loom::max_pool2d(x[0], {3}, {1}, {1})); }},
      {"unbatched, dilation, ceil_mode", {arg({2, 5, 6})},
       [](const Args& x) { return out(loom::max_pool2d(x[0], {2, 2}, {2}, {0}, {2}, true)); }}};
})
LOOM_GRAD_CASES("max_pool2d_with_indices", [] {
  return std::vector<GradCase>{
      {"overlapping windows", {arg({2, 2, 5, 4})},
       [](const Args& x) { return out(std::get<0>(loom::max_pool2d_with_indices(x[0], {3, 2}, {1}, {1}))); }},
      {"unbatched, ceil_mode, strided", {strided_arg({3, 5, 5})},
       [](const Args& x) { return out(std::get<0>(loom::max_pool2d_with_indices(x[0], {2}, {2}, {0}, {1}, true))); }}};
})
LOOM_GRAD_CASES("avg_pool2d", [] {
  return std::vector<GradCase>{
      {"kernel 2", {arg({2, 2, 4, 4})}, [](const Args& x) { return out(loom::avg_pool2d(x[0], {2})); }},
      {"padding, count_include_pad false", {strided_arg({2, 2, 5, 5})},
       [](const Args& x) { return out(loom::avg_pool2d(x[0], {3}, {2}, {1}, false, false)); }},
      {"padding, ceil_mode (clipped windows)", {arg({1, 2, 5, 6})},
       [](const Args& x) { return out(loom::avg_pool2d(x[0], {3, 2}, {2}, {1}, true)); }},
      {"unbatched, divisor_override", {arg({2, 4, 5})},
       [](const Args& x) { return out(loom::avg_pool2d(x[0], {2, 3}, {1, 2}, {1}, false, true, 4)); }}};
})
LOOM_GRAD_CASES("adaptive_avg_pool2d", [] {
  return std::vector<GradCase>{
      {"overlapping bins", {arg({2, 2, 5, 7})}, [](const Args& x) { return out(loom::adaptive_avg_pool2d(x[0], {3, 4})); }},
      {"unbatched, strided, to 1 x 1", {strided_arg({3, 4, 2})},
       [](const Args& x) { return out(loom::adaptive_avg_pool2d(x[0], {1})); }}};
})

LOOM_GRAD_CASES("upsample", [] {
  return std::vector<GradCase>{
      {"nearest up and down", {arg({2, 2, 3, 5})}, [](const Args& x) { return out(loom::upsample(x[0], {7, 2})); }},
      {"bilinear, strided", {strided_arg({1, 2, 4, 3})},
       [](const Args& x) { return out(loom::upsample(x[0], {6, 5}, "bilinear")); }},
      {"bilinear align_corners, down", {arg({1, 2, 5, 6})},
       [](const Args& x) { return out(loom::upsample(x[0], {3, 4}, "bilinear", true)); }},
      {"linear with scales", {arg({2, 2, 4})},
       [](const Args& x) { return out(loom::upsample(x[0], {7}, "linear", false, std::vector<double>{1.9})); }},
      {"trilinear", {arg({1, 1, 2, 3, 2})},
       [](const Args& x) { return out(loom::upsample(x[0], {3, 4, 3}, "trilinear")); }},
      {"area", {arg({1, 2, 6, 5})}, [](const Args& x) { return out(loom::upsample(x[0], {3, 2}, "area")); }}};
})

// ---- softmax and attention -----------------------------------------------------------------

LOOM_GRAD_CASES("softmax", [] {
  return std::vector<GradCase>{
      {"last dim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::softmax(x[0], -1)); }},
      {"middle dim, strided", {strided_arg({3, 4, 2})}, [](const Args& x) { return out(loom::softmax(x[0], 1)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::softmax(x[0], 0) * x[0]); }}};
})
LOOM_GRAD_CASES("log_softmax", [] {
  return std::vector<GradCase>{
      {"last dim", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::log_softmax(x[0], -1)); }},
      {"dim 0, strided", {strided_arg({3, 4})}, [](const Args& x) { return out(loom::log_softmax(x[0], 0)); }},
      {"0-d", {arg({})}, [](const Args& x) { return out(loom::log_softmax(x[0], -1) * x[0]); }}};
})
LOOM_GRAD_CASES("scaled_dot_product_attention", [] {
  return std::vector<GradCase>{
      {"plain", {arg({2, 3, 4}), arg({2, 5, 4}), arg({2, 5, 3})},
       [](const Args& x) { return out(loom::scaled_dot_product_attention(x[0], x[1], x[2])); }},
      {"causal, scale, broadcast batch", {arg({2, 1, 3, 2}), strided_arg({4, 2}), arg({2, 2, 4, 3})},
       [](const Args& x) { return out(loom::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true, 0.7)); }},
      {"bool mask", {arg({3, 2}), arg({4, 2}), arg({4, 2})},
       [](const Args& x) {
         const Tensor mask = loom::from_vector<bool>({true, false, true, true, true, true, false, false, false, true, true, false}, {3, 4});
         return out(loom::scaled_dot_product_attention(x[0], x[1], x[2], mask));
       }},
      {"float mask (differentiated)", {arg({2, 3, 2}), arg({2, 4, 2}), arg({2, 4, 2}), arg({3, 4})},
       [](const Args& x) { return out(loom::scaled_dot_product_attention(x[0], x[1], x[2], x[3])); }}};
})

// Both outputs of the fused op are checked, so its formula's logsumexp term
// is; gradgradcheck runs the backward op's composite under autograd.
namespace {
const Tensor& keep_mask() {  // every row keeps a key (no NaN rows in gradcheck)
  static const Tensor m = loom::from_vector<bool>(
      {true, false, true, true, false, true, false, false, false, true, true, false}, {3, 4});
  return m;
}
std::vector<Tensor> fused(const Args& x, const Tensor& mask, bool causal, double scale) {
  const auto [o, l] = loom::scaled_dot_product_attention_fused(x[0], x[1], x[2], mask, causal, scale);
  return {o, l};
}
}  // namespace

LOOM_GRAD_CASES("_scaled_dot_product_attention_fused", [] {
  return std::vector<GradCase>{
      {"L != S, E != Ev", {arg({2, 3, 4}), arg({2, 5, 4}), arg({2, 5, 3})},
       [](const Args& x) { return fused(x, {}, false, 0.5); }},
      {"causal, broadcast batch, strided key", {arg({2, 1, 3, 2}), strided_arg({4, 2}), arg({2, 2, 4, 3})},
       [](const Args& x) { return fused(x, {}, true, 0.7); }},
      {"bool mask", {arg({3, 2}), arg({4, 2}), arg({4, 2})}, [](const Args& x) { return fused(x, keep_mask(), false, 0.6); }},
      {"float mask (differentiated)", {arg({2, 3, 2}), arg({2, 4, 2}), arg({2, 4, 2}), arg({3, 4})},
       [](const Args& x) { return fused(x, x[3], false, 0.8); }}};
})
LOOM_GRAD_CASES("_scaled_dot_product_attention_backward", [] {
  // (grad_out, q, k, v, output, logsumexp): any values define the op.
  auto bwd = [](const Args& x, const Tensor& mask, bool causal) {
    const auto [gq, gk, gv] =
        loom::scaled_dot_product_attention_backward(x[0], x[1], x[2], x[3], mask, x[4], x[5], causal, 0.6);
    return std::vector<Tensor>{gq, gk, gv};
  };
  return std::vector<GradCase>{
      {"L != S, E != Ev", {arg({2, 3, 3}), arg({2, 3, 4}), arg({2, 5, 4}), arg({2, 5, 3}), arg({2, 3, 3}), arg({2, 3})},
       [bwd](const Args& x) { return bwd(x, {}, false); }},
      {"causal, broadcast key", {arg({2, 4, 2}), arg({2, 4, 2}), arg({3, 2}), arg({2, 3, 2}), arg({2, 4, 2}), arg({2, 4})},
       [bwd](const Args& x) { return bwd(x, {}, true); }},
      {"bool mask", {arg({3, 2}), arg({3, 2}), arg({4, 2}), arg({4, 2}), arg({3, 2}), arg({3})},
       [bwd](const Args& x) { return bwd(x, keep_mask(), false); }}};
})

// ---- classification losses ---------------------------------------------------------------

LOOM_GRAD_CASES("nll_loss", [] {
  const Tensor t = ints({0, 3, 1}, {3});
  return std::vector<GradCase>{
      {"mean", {arg({3, 4})}, [t](const Args& x) { return out(loom::nll_loss(x[0], t)); }},
      {"weight, ignore_index, mean", {strided_arg({3, 4}), arg({4}, 0.5, 2)},
       [t](const Args& x) { return out(loom::nll_loss(x[0], t, x[1], "mean", 3)); }},
      {"sum, spatial", {arg({2, 3, 2})},
       [](const Args& x) { return out(loom::nll_loss(x[0], ints({0, 2, 1, 1}, {2, 2}), {}, "sum")); }},
      {"none, 1-d input", {arg({4})},
       [](const Args& x) { return out(loom::nll_loss(x[0], ints({2}, {}), {}, "none")); }}};
})
// Class weights are constants: their gradient exists only for probability
// targets (with class indices PyTorch refuses a weight that requires grad).
LOOM_GRAD_CASES("cross_entropy", [] {
  const Tensor t = ints({0, 3, 1}, {3});
  const Tensor w = constant({4}, 0.5, 2);
  const Tensor probs = loom::softmax(constant({3, 4}), 1);
  return std::vector<GradCase>{
      {"class indices, mean", {arg({3, 4})}, [t](const Args& x) { return out(loom::cross_entropy(x[0], t)); }},
      {"weight, ignore_index, label_smoothing, mean", {strided_arg({3, 4})},
       [t, w](const Args& x) { return out(loom::cross_entropy(x[0], t, w, 1, "mean", 0.2)); }},
      {"weight, ignore_index, none", {arg({3, 4})},
       [t, w](const Args& x) { return out(loom::cross_entropy(x[0], t, w, 3, "none")); }},
      {"weight, label_smoothing, sum", {arg({3, 4})},
       [t, w](const Args& x) { return out(loom::cross_entropy(x[0], t, w, -100, "sum", 0.3)); }},
      {"spatial, none", {arg({2, 3, 2})},
       [](const Args& x) { return out(loom::cross_entropy(x[0], ints({0, 2, 1, 1}, {2, 2}), {}, -100, "none")); }},
      {"spatial, weight, ignore_index, label_smoothing, mean", {arg({2, 3, 2, 2})},
       [w](const Args& x) {
         return out(loom::cross_entropy(x[0], ints({0, 2, 1, 1, 2, 0, 1, 1}, {2, 2, 2}), w.narrow(0, 0, 3), 1,
                                        "mean", 0.1));
       }},
      {"1-d input, label_smoothing, none", {arg({4})},
       [](const Args& x) { return out(loom::cross_entropy(x[0], ints({2}, {}), {}, -100, "none", 0.4)); }},
      {"1-d input, weight, mean", {arg({4})},
       [w](const Args& x) { return out(loom::cross_entropy(x[0], ints({1}, {}), w)); }},
      {"probabilities, sum, label_smoothing", {arg({3, 4})},
       [probs](const Args& x) { return out(loom::cross_entropy(x[0], probs, {}, -100, "sum", 0.1)); }},
      {"probabilities (differentiated), weight (differentiated), mean", {arg({3, 4}), arg({3, 4}, 0, 1), arg({4}, 0.5, 2)},
       [](const Args& x) { return out(loom::cross_entropy(x[0], x[1], x[2])); }},
      {"probabilities (differentiated), spatial, weight, label_smoothing, none",
       {arg({2, 3, 2}), strided_arg({2, 3, 2}, 0, 1)},
       [w](const Args& x) { return out(loom::cross_entropy(x[0], x[1], w.narrow(0, 0, 3), -100, "none", 0.2)); }},
      {"probabilities, 1-d input, weight (differentiated), label_smoothing, mean", {arg({4}), arg({4}, 0.5, 2)},
       [q = loom::softmax(constant({4}), 0)](const Args& x) {
         return out(loom::cross_entropy(x[0], q, x[1], -100, "mean", 0.3));
       }}};
})
// The gradient op differentiates through its composite (cross_entropy's
// double backward); grad_output is differentiated too.
LOOM_GRAD_CASES("_cross_entropy_backward", [] {
  const Tensor t = ints({0, 3, 1}, {3});
  const Tensor w = constant({4}, 0.5, 2);
  return std::vector<GradCase>{
      {"class indices, weight, ignore_index, label_smoothing, mean", {arg({}), arg({3, 4})},
       [t, w](const Args& x) { return out(loom::cross_entropy_backward(x[0], x[1], t, w, 1, "mean", 0.2)); }},
      {"spatial, none", {arg({2, 2}), arg({2, 3, 2})},
       [](const Args& x) {
         return out(loom::cross_entropy_backward(x[0], x[1], ints({0, 2, 1, 1}, {2, 2}), {}, -100, "none"));
       }},
      {"probabilities (differentiated), weight, label_smoothing, sum", {arg({}), arg({3, 4}), arg({3, 4}, 0, 1)},
       [w](const Args& x) { return out(loom::cross_entropy_backward(x[0], x[1], x[2], w, -100, "sum", 0.1)); }}};
})

// ---- normalisation -----------------------------------------------------------------------

namespace {
// Every output of a gradient op.
std::vector<Tensor> all_of(std::tuple<Tensor, Tensor, Tensor> r) {
  return {std::get<0>(r), std::get<1>(r), std::get<2>(r)};
}
std::vector<Tensor> all_of(std::tuple<Tensor, Tensor> r) { return {std::get<0>(r), std::get<1>(r)}; }
}  // namespace

LOOM_GRAD_CASES("layer_norm", [] {
  return std::vector<GradCase>{
      {"weight and bias", {arg({2, 3, 4}), arg({4}), arg({4})},
       [](const Args& x) { return out(loom::layer_norm(x[0], {4}, x[1], x[2])); }},
      {"two dims, no affine, strided", {strided_arg({3, 2, 4})},
       [](const Args& x) { return out(loom::layer_norm(x[0], {2, 4})); }},
      {"weight only, eps", {arg({3, 5}), arg({5})},
       [](const Args& x) { return out(loom::layer_norm(x[0], {5}, x[1], {}, 0.1)); }}};
})
LOOM_GRAD_CASES("rms_norm", [] {
  return std::vector<GradCase>{
      {"weight", {arg({2, 3, 4}), arg({4})}, [](const Args& x) { return out(loom::rms_norm(x[0], {4}, x[1])); }},
      {"two dims, no weight, strided", {strided_arg({3, 2, 4})},
       [](const Args& x) { return out(loom::rms_norm(x[0], {2, 4})); }},
      {"weight, eps", {arg({3, 5}), arg({5})}, [](const Args& x) { return out(loom::rms_norm(x[0], {5}, x[1], 0.1)); }}};
})
// The gradient ops, differentiated through their composites (double
// backward): every output, with respect to grad_output, input and weight.
LOOM_GRAD_CASES("_layer_norm_backward", [] {
  return std::vector<GradCase>{
      {"weight", {arg({3, 4}), arg({3, 4}), arg({4})},
       [](const Args& x) { return all_of(loom::layer_norm_backward(x[0], x[1], {4}, x[2], 1e-5)); }},
      {"two dims, no weight, strided", {arg({2, 2, 3}), strided_arg({2, 2, 3})},
       [](const Args& x) { return all_of(loom::layer_norm_backward(x[0], x[1], {2, 3}, {}, 0.1)); }}};
})
LOOM_GRAD_CASES("_rms_norm_backward", [] {
  return std::vector<GradCase>{
      {"weight", {arg({3, 4}), arg({3, 4}), arg({4})},
       [](const Args& x) { return all_of(loom::rms_norm_backward(x[0], x[1], {4}, x[2], 1e-5)); }},
      {"two dims, no weight, strided", {arg({2, 2, 3}), strided_arg({2, 2, 3})},
       [](const Args& x) { return all_of(loom::rms_norm_backward(x[0], x[1], {2, 3}, {}, 0.1)); }}};
})
LOOM_GRAD_CASES("group_norm", [] {
  return std::vector<GradCase>{
      {"weight and bias", {arg({2, 4, 3}), arg({4}), arg({4})},
       [](const Args& x) { return out(loom::group_norm(x[0], 2, x[1], x[2])); }},
      {"spatial, no affine, strided", {strided_arg({2, 6, 2, 2})},
       [](const Args& x) { return out(loom::group_norm(x[0], 3)); }}};
})
namespace {
// Running statistics for C channels, made once per case list (the case
// functions must be deterministic): float64, or float32 to check that
// their own dtype is read as it is.
struct RunningStats {
  Tensor mean, var;
};
RunningStats running_stats(int64_t C, DType t = DType::Float64) {
  return {constant({C}, -0.5, 0.5).to(t), constant({C}, 0.5, 2).to(t)};
}
}  // namespace

LOOM_GRAD_CASES("batch_norm", [] {
  const RunningStats s2 = running_stats(2), s3f = running_stats(3, DType::Float32);
  return std::vector<GradCase>{
      {"training, running stats, weight and bias, 3-d", {arg({4, 3, 2}), arg({3}), arg({3})},
       [](const Args& x) {
         const Tensor rm = loom::zeros({3}, DType::Float64), rv = loom::ones({3}, DType::Float64);
         return out(loom::batch_norm(x[0], rm, rv, x[1], x[2], true));
       }},
      {"training, no running stats, strided 2-d", {strided_arg({5, 2})},
       [](const Args& x) { return out(loom::batch_norm(x[0], {}, {}, {}, {}, true)); }},
      {"training, weight only, 4-d", {arg({2, 3, 2, 2}), arg({3})},
       [](const Args& x) { return out(loom::batch_norm(x[0], {}, {}, x[1], {}, true, 0.1, 1e-3)); }},
      {"training, bias only, 5-d", {arg({2, 2, 2, 1, 2}), arg({2})},
       [](const Args& x) { return out(loom::batch_norm(x[0], {}, {}, {}, x[1], true)); }},
      {"eval, 3-d", {arg({3, 2, 2}), arg({2}), arg({2})},
       [](const Args& x) {
         const Tensor rm = loom::from_vector<double>({0.3, -0.2}, {2}), rv = loom::from_vector<double>({0.5, 1.5}, {2});
         return out(loom::batch_norm(x[0], rm, rv, x[1], x[2], false));
       }},
      {"eval, no affine, float32 running stats, 2-d", {arg({4, 3})},
       [s3f](const Args& x) { return out(loom::batch_norm(x[0], s3f.mean, s3f.var, {}, {}, false)); }},
      {"eval, weight only, 5-d", {arg({2, 2, 2, 2, 1}), arg({2})},
       [s2](const Args& x) { return out(loom::batch_norm(x[0], s2.mean, s2.var, x[1], {}, false, 0.1, 0.1)); }}};
})

// The gradient op is differentiated through its composite (double backward
// of batch_norm): every output, with respect to grad_output, input and weight.
LOOM_GRAD_CASES("_batch_norm_backward", [] {
  const RunningStats s3 = running_stats(3), s2f = running_stats(2, DType::Float32);
  return std::vector<GradCase>{
      {"training, weight, 3-d", {arg({3, 2, 2}), arg({3, 2, 2}), arg({2})},
       [](const Args& x) { return all_of(loom::batch_norm_backward(x[0], x[1], x[2], {}, {}, true)); }},
      {"training, no weight, strided 2-d", {arg({4, 3}), strided_arg({4, 3})},
       [](const Args& x) { return all_of(loom::batch_norm_backward(x[0], x[1], {}, {}, {}, true, 1e-3)); }},
      {"training, weight, 4-d", {arg({2, 2, 2, 2}), arg({2, 2, 2, 2}), arg({2})},
       [](const Args& x) { return all_of(loom::batch_norm_backward(x[0], x[1], x[2], {}, {}, true)); }},
      {"eval, weight, 4-d", {arg({2, 3, 2, 1}), arg({2, 3, 2, 1}), arg({3})},
       [s3](const Args& x) { return all_of(loom::batch_norm_backward(x[0], x[1], x[2], s3.mean, s3.var, false)); }},
      {"eval, no weight, float32 running stats, 5-d", {arg({2, 2, 1, 2, 2}), arg({2, 2, 1, 2, 2})},
       [s2f](const Args& x) {
         return all_of(loom::batch_norm_backward(x[0], x[1], {}, s2f.mean, s2f.var, false, 0.01));
       }}};
})

// ---- pad ---------------------------------------------------------------------------------

LOOM_GRAD_CASES("pad", [] {
  return std::vector<GradCase>{
      {"constant, value, strided", {strided_arg({3, 4})},
       [](const Args& x) { return out(loom::pad(x[0], {1, 2, 0, 1}, "constant", 0.5)); }},
      {"constant, negative (crop)", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::pad(x[0], {-1, 2, 1, -1})); }},
      {"replicate, 2 dims", {arg({2, 3, 4})}, [](const Args& x) { return out(loom::pad(x[0], {2, 1, 0, 3}, "replicate")); }},
      {"reflect, 2 dims", {arg({1, 3, 4})}, [](const Args& x) { return out(loom::pad(x[0], {3, 1, 2, 2}, "reflect")); }},
      {"reflect, 1 dim, strided", {strided_arg({2, 5})}, [](const Args& x) { return out(loom::pad(x[0], {2, 4}, "reflect")); }}};
})

// ---- the regression and binary losses (ops_loss.cpp): catalog ops with PyTorch's formulas ----

// The regression losses: |input - target| stays away from 0 and from beta /
// delta (the kinks), where finite differences would straddle them.
namespace regression {
Tensor target() { return loom::from_vector<double>({0.1, -0.9, 1.6, -0.2, 2.4, 0.7}, {2, 3}); }
Tensor input() { return loom::from_vector<double>({0.4, 0.8, 0.2, -1.5, 2.0, 0.1}, {2, 3}).requires_grad_(); }
}  // namespace regression

LOOM_GRAD_CASES("mse_loss", [] {
  const Tensor t = regression::target();
  return std::vector<GradCase>{
      {"mean", {regression::input()}, [t](const Args& x) { return out(loom::mse_loss(x[0], t)); }},
      {"none, broadcast, target differentiated", {arg({3}, 3, 4), arg({2, 3}, -1, 0)},
       [](const Args& x) { return out(loom::mse_loss(x[0], x[1], "none")); }}};
})
LOOM_GRAD_CASES("l1_loss", [] {
  const Tensor t = regression::target();
  return std::vector<GradCase>{
      {"sum", {regression::input()}, [t](const Args& x) { return out(loom::l1_loss(x[0], t, "sum")); }},
      {"mean, broadcast, target differentiated", {arg({3}, 3, 4), arg({2, 3}, -1, 0)},
       [](const Args& x) { return out(loom::l1_loss(x[0], x[1])); }}};
})
LOOM_GRAD_CASES("smooth_l1_loss", [] {
  const Tensor t = regression::target();
  return std::vector<GradCase>{
      {"mean, beta 0.5", {regression::input()},
       [t](const Args& x) { return out(loom::smooth_l1_loss(x[0], t, "mean", 0.5)); }},
      {"none, beta 0", {regression::input()}, [t](const Args& x) { return out(loom::smooth_l1_loss(x[0], t, "none", 0.0)); }},
      {"sum, target differentiated", {strided_arg({3, 2}, -3, 3), arg({3, 2}, -1, 1)},
       [](const Args& x) { return out(loom::smooth_l1_loss(x[0], x[1], "sum", 0.01)); }}};
})
LOOM_GRAD_CASES("huber_loss", [] {
  const Tensor t = regression::target();
  return std::vector<GradCase>{
      {"sum, delta 0.5", {regression::input()}, [t](const Args& x) { return out(loom::huber_loss(x[0], t, "sum", 0.5)); }},
      {"mean, delta 2, broadcast", {arg({3}, 3, 4), arg({2, 3}, -1, 0)},
       [](const Args& x) { return out(loom::huber_loss(x[0], x[1], "mean", 2.0)); }}};
})
LOOM_GRAD_CASES("binary_cross_entropy", [] {
  const Tensor target = constant({2, 3}, 0, 1), weight = constant({3}, 0.5, 2);
  return std::vector<GradCase>{
      {"weight, mean", {arg({2, 3}, 0.1, 0.9)},
       [target, weight](const Args& x) { return out(loom::binary_cross_entropy(x[0], target, weight)); }},
      {"sum, target differentiated", {arg({4}, 0.1, 0.9), arg({4}, 0, 1)},
       [](const Args& x) { return out(loom::binary_cross_entropy(x[0], x[1], {}, "sum")); }},
      {"none, weight differentiated", {strided_arg({3, 2}, 0.1, 0.9), arg({2}, 0.5, 2)},
       [t32 = constant({3, 2}, 0, 1)](const Args& x) { return out(loom::binary_cross_entropy(x[0], t32, x[1], "none")); }}};
})
LOOM_GRAD_CASES("binary_cross_entropy_with_logits", [] {
  const Tensor target = constant({2, 3}, 0, 1);
  return std::vector<GradCase>{
      {"pos_weight differentiated, sum", {arg({2, 3}, -3, 3), arg({3}, 0.5, 2)},
       [target](const Args& x) { return out(loom::binary_cross_entropy_with_logits(x[0], target, {}, x[1], "sum")); }},
      {"target and weight differentiated, mean", {strided_arg({3, 2}, -3, 3), arg({3, 2}, 0, 1), arg({3, 2}, 0.5, 2)},
       [](const Args& x) { return out(loom::binary_cross_entropy_with_logits(x[0], x[1], x[2])); }},
      {"everything differentiated, none", {arg({2, 3}, -3, 3), arg({2, 3}, 0, 1), arg({3}, 0.5, 2), arg({3}, 0.5, 2)},
       [](const Args& x) { return out(loom::binary_cross_entropy_with_logits(x[0], x[1], x[2], x[3], "none")); }}};
})
