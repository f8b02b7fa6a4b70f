// samples_random.cpp — uniform_, normal_ and dropout. Their values are
// drawn from loom's generator, which a device need not reproduce: compared
// Statistical (shape, dtype, mean and range). Large samples keep the
// statistics tight.
#include "sample_util.h"

namespace loom::opinfo {
namespace {
using namespace detail;

LOOM_OP_SAMPLES("uniform_", {
    .compare = Compare::Statistical,
    .make = [](const SampleContext& c) {
      return Samples{c.call("[0, 1)", {c.tensor({kLarge + 1})}),
                     c.call("[-2, 5)", {c.tensor({100, 100})}, {F(-2), F(5)}),
                     c.call("from == to", {c.tensor({50})}, {F(1.5), F(1.5)}),
                     c.call("0-d", {c.tensor({})}),
                     c.call("empty", {c.tensor({0, 4})})};
    }})

LOOM_OP_SAMPLES("normal_", {
    .compare = Compare::Statistical,
    .make = [](const SampleContext& c) {
      return Samples{c.call("standard", {c.tensor({kLarge + 1})}),
                     c.call("mean 3, std 0.5", {c.tensor({100, 100})}, {F(3), F(0.5)}),
                     c.call("std 0", {c.tensor({50})}, {F(-1), F(0)}),
                     c.call("0-d", {c.tensor({})}),
                     c.call("empty", {c.tensor({0, 4})})};
    }})

// dropout(input, p, train): identity unless training with 0 < p.
LOOM_OP_SAMPLES("dropout", {
    .compare = Compare::Statistical,
    .make = [](const SampleContext& c) {
      return Samples{c.call("p=0.5 train", {c.tensor({kLarge + 1}, 1, 2)}, {F(0.5), B(true)}),
                     c.call("p=0.2 train, 2-d", {c.tensor({200, 200}, 1, 2)}, {F(0.2), B(true)}),
                     c.call("eval (identity)", {c.tensor({4, 5})}, {F(0.5), B(false)}),
                     c.call("p=0 (identity)", {c.tensor({4, 5})}, {F(0), B(true)}),
                     c.call("p=1 (zeros)", {c.tensor({4, 5})}, {F(1), B(true)}),
                     c.call("0-d", {c.tensor({})}, {F(0.5), B(true)}),
                     c.call("empty", {c.tensor({0, 4})}, {F(0.5), B(true)})};
    }})

// multinomial(probs, num_samples, replacement): indices, compared by their
// distribution (any non-negative weights; zero-weight categories never drawn).
LOOM_OP_SAMPLES("multinomial", {
    .compare = Compare::Statistical,
    .make = [](const SampleContext& c) {
      return Samples{c.call("rows, with replacement", {c.tensor({8, 10}, 0, 1)}, {I(60), B(true)}),
                     c.call("1-d, without replacement", {c.tensor({1000}, 0.1, 1)}, {I(200), B(false)}),
                     c.call("every category, without replacement", {c.tensor({4, 6}, 0.1, 1)}, {I(6), B(false)}),
                     c.call("one sample", {c.tensor({16, 50}, 0, 1)}, {I(1), B(true)})};
    }})

}  // namespace
}  // namespace loom::opinfo
