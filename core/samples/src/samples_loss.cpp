// samples_loss.cpp — nll_loss and cross_entropy: every reduction, class
// weights, ignore_index, spatial targets, label smoothing and probability
// targets.
#include "sample_util.h"

namespace loom::samples {
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

LOOM_OP_SAMPLES("cross_entropy", {
    .make = [](const SampleContext& c) {
      Samples v = class_target_samples(c);
      v.push_back(c.call("label_smoothing", {c.tensor({5, 4}), c.indices({5}, 4), std::nullopt}, {S("mean"), I(-100), F(0.2)}));
      v.push_back(c.call("label_smoothing, weights, sum", {c.tensor({5, 4}), c.indices({5}, 4), c.tensor({4}, 0.2, 2)},
                         {S("sum"), I(-100), F(0.1)}));
      v.push_back(c.call("probability targets", {c.tensor({5, 4}), softmax(c.tensor({5, 4}), 1)}));
      v.push_back(c.call("probability targets, none", {c.tensor({5, 4}), softmax(c.tensor({5, 4}), 1), std::nullopt}, {S("none")}));
      return v;
    }})

}  // namespace
}  // namespace loom::samples
