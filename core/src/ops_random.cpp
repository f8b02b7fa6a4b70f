// ops_random.cpp — the default generator and uniform_/normal_.
//
// Counter-based (Philox): a call gets (seed, offset) and element i uses
// counter offset + i, so the numbers depend only on the seed and the order
// of calls, never on the device, strides or threads.
#include "autograd/formula.h"
#include "core_op.h"
#include "random_state.h"

#include <loom/error.h>
#include <loom/ops.h>

#include <cmath>
#include <mutex>

namespace loom {
namespace {

struct Generator {
  std::mutex mutex;
  uint64_t seed = 67280421310721ull;  // PyTorch's default seed
  uint64_t offset = 0;

  // Reserves `n` counters; returns {seed, first counter}.
  std::pair<uint64_t, uint64_t> take(int64_t n) {
    std::lock_guard lock(mutex);
    const uint64_t first = offset;
    offset += static_cast<uint64_t>(n);
    return {seed, first};
  }
};

Generator& default_generator() {
  static auto* g = new Generator;
  return *g;
}

// values: a, b (float), generator (INT_LIST {seed, offset} after prepare).
void prepare_random(OpCall& call) {
  const Tensor& self = call.arg(0);
  LOOM_CHECK(self.is_floating_point(), call.op->name(),
             " expects a floating point tensor, got ", name(self.dtype()));
  const bool normal = call.op->name() == "normal_";
  const double a = call.values[0].u.f, b = call.values[1].u.f;
  if (normal) {
    LOOM_CHECK(b >= 0 && std::isfinite(b), "normal_ expects std >= 0.0, got ", b);
  } else {
    LOOM_CHECK(a <= b, "uniform_ expects from <= to, got from=", a, " > to=", b);
  }
  auto [seed, first] = default_generator().take(self.numel());
  call.list_storage = {static_cast<int64_t>(seed), static_cast<int64_t>(first)};
  call.values[2] = detail::int_list_value(call.list_storage);
  prepare_self_output(call);
}

LOOM_CORE_OP(uniform_op,
             "uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)",
             prepare_random, nullptr)
LOOM_CORE_OP(normal_op,
             "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)",
             prepare_random, nullptr)

// The drawn numbers do not depend on the old value of self, which is
// overwritten whole: it gets a zero gradient.
void overwritten_backward(autograd::BackwardContext& c) { c.set(0, zeros_like(c.grad())); }
LOOM_DERIVATIVE(uniform_op, "UniformBackward0", autograd::none(), autograd::none(), overwritten_backward)
LOOM_DERIVATIVE(normal_op, "NormalBackward0", autograd::none(), autograd::none(), overwritten_backward)

}  // namespace

std::pair<uint64_t, uint64_t> detail::take_random_counters(int64_t n) {
  return default_generator().take(n);
}

void manual_seed(uint64_t seed) {
  auto& g = default_generator();
  std::lock_guard lock(g.mutex);
  g.seed = seed;
  g.offset = 0;
}

Tensor& Tensor::uniform_(double from, double to) {
  detail::run_op(uniform_op(), {this},
                 {detail::float_value(from), detail::float_value(to), detail::none_value()});
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  detail::run_op(normal_op(), {this},
                 {detail::float_value(mean), detail::float_value(std), detail::none_value()});
  return *this;
}

}  // namespace loom
