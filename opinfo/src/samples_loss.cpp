// samples_loss.cpp — nll_loss, cross_entropy and _cross_entropy_backward:
// every reduction, class weights, ignore_index, spatial targets, label
// smoothing and probability targets.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

// Inputs (N, C) or (N, C, d) with int64 targets in [0, C).
Samples class_target_samples(const SampleContext& c) {
  return {c.call("mean", {c.tensor({5, 4}), c.indices({5}, 4)}),
          c.call("sum", {c.tensor({5, 4}), c.indices({5}, 4), std::nullopt}, {S("sum")}),
          c.call("none", {c.tensor({5, 4}), c.indices({5}, 4), std::nullopt}, {S("none")}),
          c.call("class weights", {c.tensor({6, 3}), c.indices({6}, 3), c.tensor({3}, 0.2, 2)}),
          c.call("ignore_index=1", {c.tensor({6, 3}), c.indices({6}, 3), std::nullopt}, {S("mean"), I(1)}),
          c.call("weights and ignore_index, none", {c.tensor({6, 3}), c.indices({6}, 3), c.tensor({3}, 0.2, 2)},
                 {S("none"), I(0)}),
          c.call("spatial target", {c.tensor({2, 4, 3, 3}), c.indices({2, 3, 3}, 4)}),
          c.call("unbatched", {c.tensor({4}), c.indices({}, 4)}),
          c.call("empty batch, sum", {c.tensor({0, 4}), c.indices({0}, 4), std::nullopt}, {S("sum")}),
          c.call("large", {c.tensor({4096, 10}), c.indices({4096}, 10)})};
}

LOOM_OP_SAMPLES("nll_loss", {
    .make = [](const SampleContext& c) { return class_target_samples(c); }})

// What cross_entropy adds to the class-target samples: label smoothing in
// every combination, rows long enough for the kernels' vector and
// block-per-row paths, a batch whose targets are all ignored (mean: 0/0),
// and probability targets. Shared with _cross_entropy_backward.
Samples cross_entropy_samples(const SampleContext& c) {
  Samples v = class_target_samples(c);
  auto add = [&](std::string label, std::vector<int64_t> shape, bool weighted, std::vector<Value> values) {
    const int64_t C = shape.size() == 1 ? shape[0] : shape[1];
    std::vector<int64_t> tshape = shape;
    tshape.erase(tshape.begin() + (shape.size() == 1 ? 0 : 1));
    std::optional<Tensor> w;
    if (weighted) w = c.tensor({C}, 0.2, 2);
    v.push_back(c.call(std::move(label), {c.tensor(shape), c.indices(tshape, C), w}, std::move(values)));
  };
  add("label_smoothing", {5, 4}, false, {S("mean"), I(-100), F(0.2)});
  add("label_smoothing, weights, sum", {5, 4}, true, {S("sum"), I(-100), F(0.1)});
  add("label_smoothing, weights, ignore_index, mean", {7, 3}, true, {S("mean"), I(2), F(0.3)});
  add("label_smoothing, ignore_index, none", {7, 3}, false, {S("none"), I(0), F(0.15)});
  add("spatial, weights, ignore_index, label_smoothing", {2, 5, 3, 4}, true, {S("mean"), I(4), F(0.25)});
  add("unbatched, weights, label_smoothing, none", {6}, true, {S("none"), I(-100), F(0.5)});
  add("label_smoothing 1", {4, 5}, false, {S("mean"), I(-100), F(1.0)});
  add("long rows, label_smoothing", {3, 1500}, false, {S("mean"), I(-100), F(0.1)});
  add("long rows, weights, sum", {2, 3000}, true, {S("sum")});
  v.push_back(c.call("every target ignored, mean", {c.tensor({3, 4}), full({3}, 1, DType::Int64), std::nullopt},
                     {S("mean"), I(1), F(0.1)}));
  v.push_back(c.call("probability targets", {c.tensor({5, 4}), softmax(c.tensor({5, 4}), 1)}));
  v.push_back(c.call("probability targets, none", {c.tensor({5, 4}), softmax(c.tensor({5, 4}), 1), std::nullopt},
                     {S("none")}));
  v.push_back(c.call("probability targets, spatial, weights, label_smoothing, sum",
                     {c.tensor({2, 3, 4}), softmax(c.tensor({2, 3, 4}), 1), c.tensor({3}, 0.2, 2)},
                     {S("sum"), I(-100), F(0.2)}));
  return v;
}

LOOM_OP_SAMPLES("cross_entropy", {
    .make = [](const SampleContext& c) { return cross_entropy_samples(c); }})

// Every cross_entropy sample with a grad_output of the loss's shape in front.
LOOM_OP_SAMPLES("_cross_entropy_backward", {
    .make = [](const SampleContext& c) {
      Samples v = cross_entropy_samples(c);
      for (Sample& s : v) {
        const Tensor& input = *s.tensors[0];
        const bool none = !s.values.empty() && std::get<std::string>(s.values[0]) == "none";
        std::vector<int64_t> shape;
        if (none) {
          shape = std::vector<int64_t>(input.sizes().begin(), input.sizes().end());
          shape.erase(shape.begin() + (input.dim() == 1 ? 0 : 1));
        }
        s.tensors.insert(s.tensors.begin(), c.tensor(shape, -2, 2));
        for (size_t& k : s.keep_layout) ++k;
      }
      return v;
    }})

}  // namespace
}  // namespace loom::opinfo

// ---- the regression and binary losses (core/src/ops/ops_loss.cpp) --------------------------

namespace loom::opinfo {
namespace {
using namespace detail;

// input, target: same shape, broadcast, 0-d, empty, large; each reduction.
Samples regression_samples(const SampleContext& c, std::vector<Value> extra = {}) {
  auto values = [&](const char* reduction) {
    std::vector<Value> v{S(reduction)};
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  return {c.call("mean", {c.tensor({4, 5}), c.tensor({4, 5})}, values("mean")),
          c.call("sum", {c.tensor({4, 5}), c.tensor({4, 5})}, values("sum")),
          c.call("none, broadcast target", {c.tensor({3, 4}), c.tensor({4})}, values("none")),
          c.call("0-d", {c.tensor({}), c.tensor({})}, values("mean")),
          c.call("empty, sum", {c.tensor({0, 3}), c.tensor({0, 3})}, values("sum")),
          c.call("large", {c.tensor({300, 200}), c.tensor({300, 200})}, values("mean"))};
}

LOOM_OP_SAMPLES("mse_loss", {.accumulates = true, .make = [](const SampleContext& c) { return regression_samples(c); }})
LOOM_OP_SAMPLES("l1_loss", {.accumulates = true, .make = [](const SampleContext& c) { return regression_samples(c); }})
LOOM_OP_SAMPLES("smooth_l1_loss", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      Samples v = regression_samples(c, {F(0.5)});
      v.push_back(c.call("beta 0", {c.tensor({4, 5}), c.tensor({4, 5})}, {S("mean"), F(0.0)}));
      return v;
    }})
LOOM_OP_SAMPLES("huber_loss", {
    .accumulates = true, .make = [](const SampleContext& c) { return regression_samples(c, {F(1.5)}); }})

// Probabilities in [0, 1], the exact ends included (where PyTorch clamps the
// logs at -100 and the gradient's denominator at 1e-12).
LOOM_OP_SAMPLES("binary_cross_entropy", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      const Tensor ends = from_vector<double>({0, 1, 0.5, 1, 0, 0.25}, {6}).to(c.dtype());
      const Tensor ends_target = from_vector<double>({0, 1, 1, 0, 1, 0.5}, {6}).to(c.dtype());
      return Samples{
          c.call("mean", {c.tensor({4, 5}, 0, 1), c.tensor({4, 5}, 0, 1)}),
          c.call("weight, sum", {c.tensor({4, 5}, 0, 1), c.tensor({4, 5}, 0, 1), c.tensor({5}, 0.5, 2)}, {S("sum")}),
          c.call("none", {c.tensor({3, 4}, 0, 1), c.tensor({3, 4}, 0, 1), std::nullopt}, {S("none")}),
          c.call("inputs exactly 0 and 1, none", {ends, ends_target, std::nullopt}, {S("none")}),
          c.call("empty, sum", {c.tensor({0}, 0, 1), c.tensor({0}, 0, 1), std::nullopt}, {S("sum")}),
          c.call("large", {c.tensor({300, 200}, 0, 1), c.tensor({300, 200}, 0, 1)})};
    }})

LOOM_OP_SAMPLES("binary_cross_entropy_with_logits", {
    .accumulates = true,
    .make = [](const SampleContext& c) {
      return Samples{
          c.call("mean", {c.tensor({4, 5}), c.tensor({4, 5}, 0, 1)}),
          c.call("weight and pos_weight, sum",
                 {c.tensor({4, 5}), c.tensor({4, 5}, 0, 1), c.tensor({5}, 0.5, 2), c.tensor({5}, 0.5, 3)}, {S("sum")}),
          c.call("pos_weight, none", {c.tensor({3, 4}), c.tensor({3, 4}, 0, 1), std::nullopt, c.tensor({4}, 0.5, 3)},
                 {S("none")}),
          c.call("saturated logits", {c.tensor({4, 5}, -200, 200), c.tensor({4, 5}, 0, 1)}),
          c.call("empty, sum", {c.tensor({0}), c.tensor({0}, 0, 1), std::nullopt, std::nullopt}, {S("sum")}),
          c.call("large", {c.tensor({300, 200}), c.tensor({300, 200}, 0, 1)})};
    }})

}  // namespace
}  // namespace loom::opinfo
