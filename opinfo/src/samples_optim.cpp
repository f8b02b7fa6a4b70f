// samples_optim.cpp — the fused optimizer updates (_adam_update_, _adam_step_, _sgd_step_). In-place
// with no functional partner, so the samples are of the in-place op itself;
// exp_avg_sq is a running mean of squares, so it is drawn non-negative.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

LOOM_OP_SAMPLES("_adam_update_", {
    .dtypes = kFloatDTypes,
    .make = [](const SampleContext& c) {
      auto state = [&c](Shape s) {
        return std::vector<std::optional<Tensor>>{c.tensor(s), c.tensor(s, -1, 1), c.tensor(s, 0, 1)};
      };
      return Samples{c.call("2-d", state({8, 16}), {F(1e-3), F(1e-8)}),
                     c.call("0-d", state({}), {F(0.1), F(1e-3)}),
                     c.call("empty", state({0, 4}), {F(1e-3), F(1e-8)}),
                     c.call("large step, eps 0.1", state({3, 5, 7}), {F(0.5), F(0.1)}),
                     c.call("large", state({kLarge}), {F(1e-2), F(1e-6)})};
    }})

// _adam_step_(self, grad, exp_avg, exp_avg_sq, decay, beta1, beta2,
// step_size, eps): the result is the parameter; the running averages it
// updates in place feed it, so a wrong state update shows in the result.
LOOM_OP_SAMPLES("_adam_step_", {
    .dtypes = kFloatDTypes,
    .make = [](const SampleContext& c) {
      auto state = [&c](Shape s) {
        return std::vector<std::optional<Tensor>>{c.tensor(s), c.tensor(s, -1, 1), c.tensor(s, -1, 1),
                                                  c.tensor(s, 0, 1)};
      };
      return Samples{
          c.call("2-d, AdamW decay", state({8, 16}), {F(0.99), F(0.9), F(0.999), F(1e-3), F(1e-8)}),
          c.call("0-d, no decay", state({}), {F(1.0), F(0.9), F(0.999), F(0.1), F(1e-3)}),
          c.call("empty", state({0, 4}), {F(1.0), F(0.9), F(0.999), F(1e-3), F(1e-8)}),
          c.call("betas past 0.5, large step", state({3, 5, 7}), {F(0.9), F(0.3), F(0.6), F(0.5), F(0.1)}),
          c.call("large", state({kLarge}), {F(0.999), F(0.9), F(0.999), F(1e-2), F(1e-6)})};
    }})

// _sgd_step_(self, grad, momentum_buffer, weight_decay, momentum,
// dampening, nesterov, lr): the result is the parameter, fed by the buffer
// the op updates in place.
LOOM_OP_SAMPLES("_sgd_step_", {
    .dtypes = kFloatDTypes,
    .make = [](const SampleContext& c) {
      auto state = [&c](Shape s) {
        return std::vector<std::optional<Tensor>>{c.tensor(s), c.tensor(s, -1, 1), c.tensor(s, -1, 1)};
      };
      return Samples{c.call("2-d, weight decay", state({8, 16}), {F(1e-4), F(0.9), F(0), B(false), F(0.1)}),
                     c.call("0-d, nesterov", state({}), {F(0), F(0.9), F(0), B(true), F(0.5)}),
                     c.call("empty", state({0, 4}), {F(0), F(0.9), F(0), B(false), F(0.1)}),
                     c.call("dampening, nesterov with decay", state({3, 5, 7}), {F(0.01), F(0.5), F(0.3), B(true), F(1.5)}),
                     c.call("large", state({kLarge}), {F(5e-4), F(0.99), F(0), B(false), F(1e-2)})};
    }})

}  // namespace
}  // namespace loom::opinfo
