// ops_random.cpp — uniform_ and normal_ (the generators: generator.cpp).
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

namespace loom {
namespace {

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
  auto [seed, first] = detail::take_random_counters(call.values[2], self, self.numel(), call.op->name());
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

// ------------------------------------------------------------- multinomial ---
// values: num_samples, replacement, generator.

void prepare_multinomial(OpCall& call) {
  const Tensor& probs = call.arg(0);
  const int64_t k = call.values[0].u.i;
  const bool replacement = call.values[1].u.i != 0;
  LOOM_CHECK(probs.dim() == 1 || probs.dim() == 2, "multinomial: prob_dist must be 1 or 2 dim, got ",
             probs.dim(), " dims");
  LOOM_CHECK(probs.is_floating_point(), "multinomial: only floating point probabilities are supported, got ",
             name(probs.dtype()));
  LOOM_CHECK(k > 0, "multinomial: cannot sample n_sample <= 0 samples, got ", k);
  const int64_t categories = probs.size(-1);
  LOOM_CHECK(categories > 0, "multinomial: prob_dist has no categories (shape ", shape_str(probs.sizes()), ")");
  LOOM_CHECK(replacement || k <= categories, "multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
             "without replacement (", k, " > ", categories, ")");
  auto& plan = call.outputs.emplace_back();
  plan.dtype = DType::Int64;
  plan.sizes = probs.dim() == 1 ? DimVector{k} : DimVector{probs.size(0), k};
  call.compute_dtype = probs.dtype();
}

// With replacement: sample s of a row is the category whose cumulative
// range [cdf[j-1], cdf[j]) holds u_s, i.e. the number of cdf entries <= u_s
// (zero-probability categories have empty ranges). Without: the k
// smallest exponential keys -log(u) / p, which picks categories with the
// law of drawing one at a time and removing it (the exponential race).
void multinomial_composite(OpCall& call) {
  const Tensor& input = call.arg(0);
  const int64_t k = call.values[0].u.i;
  const bool replacement = call.values[1].u.i != 0;
  const std::optional<Generator> gen = detail::generator_arg(call.values[2], input, "multinomial");
  const DType dt = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const Tensor p = (input.dim() == 1 ? input.unsqueeze(0) : input).to(dt);
  const int64_t rows = p.size(0), categories = p.size(1);
  if (p.numel() > 0) {
    // One host read for every check, as PyTorch's CPU kernel makes them.
    const Tensor row_sums = sum(p, IntArrayRef{1});
    const double lo = min(p).item<double>();
    LOOM_CHECK(!std::isnan(lo) && lo >= 0 && all(isfinite(p)).item<bool>(),
               "multinomial: probability tensor contains either `inf`, `nan` or element < 0");
    LOOM_CHECK(min(row_sums).item<double>() > 0, "multinomial: invalid multinomial distribution (sum of "
               "probabilities <= 0)");
    if (!replacement)
      LOOM_CHECK(min(sum(p > Scalar(0.0), IntArrayRef{1})).item<int64_t>() >= k,
                 "multinomial: invalid multinomial distribution (with replacement=False, not enough non-negative "
                 "category to sample)");
  }
  Tensor picks;
  if (replacement) {
    const Tensor cdf = div(cumsum(p, 1), sum(p, IntArrayRef{1}, true));
    const Tensor u = empty({rows, k, 1}, dt, input.device()).uniform_(0, 1, gen);
    picks = clamp(sum(le(cdf.unsqueeze(1), u), IntArrayRef{2}), std::nullopt, Scalar(categories - 1));
  } else {
    const Tensor u = empty({rows, categories}, dt, input.device()).uniform_(0, 1, gen);
    const Tensor keys = div(neg(log1p(neg(u))), p);  // -log(1 - u): u may be 0, never 1
    picks = std::get<1>(topk(keys, k, 1, false, true));
  }
  picks = picks.to(DType::Int64);
  call.result() = input.dim() == 1 ? picks.squeeze(0) : picks;
}

LOOM_CORE_OP(multinomial_op,
             "multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) "
             "-> Tensor",
             prepare_multinomial, multinomial_composite)
LOOM_NOT_DIFFERENTIABLE(multinomial_op)

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement,
                   const std::optional<Generator>& generator) {
  LoomValue n{};
  n.kind = LOOM_VALUE_INT;
  n.u.i = num_samples;
  return detail::run_op(multinomial_op(), {&probs},
                        {n, detail::bool_value(replacement), detail::generator_value(generator ? &*generator : nullptr)});
}

Tensor& Tensor::uniform_(double from, double to, const std::optional<Generator>& generator) {
  detail::run_op(uniform_op(), {this},
                 {detail::float_value(from), detail::float_value(to),
                  detail::generator_value(generator ? &*generator : nullptr)});
  return *this;
}

Tensor& Tensor::normal_(double mean, double std, const std::optional<Generator>& generator) {
  detail::run_op(normal_op(), {this},
                 {detail::float_value(mean), detail::float_value(std),
                  detail::generator_value(generator ? &*generator : nullptr)});
  return *this;
}

}  // namespace loom
