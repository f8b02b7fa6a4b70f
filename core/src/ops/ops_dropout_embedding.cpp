// ops_dropout_embedding.cpp — dropout and embedding, both catalog ops with
// CPU kernels. dropout draws from the default generator (manual_seed
// reproduces it); its composite draws the very same numbers through uniform_,
// so every device gives the same mask.
#include "autograd/formula.h"
#include "core_op.h"
#include "random_state.h"

#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

void check_dropout_p(double p) {
  LOOM_CHECK(p >= 0 && p <= 1, "dropout: probability has to be between 0 and 1, but got ", p);
}

// values: [0] padding_idx (INT or NONE), passed through; the forward pass
// does not use it.
void prepare_embedding(OpCall& call) {
  const Tensor& weight = call.arg(0);
  const Tensor& indices = call.arg(1);
  LOOM_CHECK(weight.dim() == 2, "embedding: 'weight' must be 2-D [num_embeddings, embedding_dim], got ",
             weight.dim(), "-D of shape ", shape_str(weight.sizes()));
  LOOM_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32,
             "embedding: expected 'indices' of dtype int64 or int32, got ", name(indices.dtype()));
  const int64_t n = weight.size(0);
  if (call.values[0].kind != LOOM_VALUE_NONE) {
    const int64_t pad = call.values[0].u.i;
    LOOM_CHECK(pad >= -n && pad < n, "embedding: padding_idx ", pad,
               " must be within num_embeddings ", n, " (expected [", -n, ", ", n - 1, "])");
    call.values[0].u.i = pad < 0 ? pad + n : pad;
  }
  call.inputs.resize(2);
  call.inputs[0].tensor = weight.impl();
  call.inputs[1].tensor = indices.impl();
  call.compute_dtype = weight.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = weight.dtype();
  plan.sizes = DimVector(indices.sizes());
  plan.sizes.push_back(weight.size(1));
}

// values: [0] FLOAT p, [1] BOOL train, [2] generator -> INT_LIST {seed,
// offset}. loom::dropout returns early for !train, p == 0 and p == 1; a
// caller that reaches the op directly (Python, a plugin) gets the same
// results: !train runs as p = 0, which every kernel and the composite make
// an exact copy.
void prepare_dropout(OpCall& call) {
  const Tensor& input = call.arg(0);
  LOOM_CHECK(input.is_floating_point(), "dropout: expected a floating point input, got ",
             name(input.dtype()));
  check_dropout_p(call.values[0].u.f);
  if (call.values[1].u.i == 0) call.values[0].u.f = 0.0;
  auto [seed, first] = detail::take_random_counters(call.values[2], input, input.numel(), "dropout");
  call.list_storage = {static_cast<int64_t>(seed), static_cast<int64_t>(first)};
  call.values[2] = detail::int_list_value(call.list_storage);
  call.inputs.resize(1);
  call.inputs[0].tensor = input.impl();
  call.compute_dtype = input.dtype();
  auto& plan = call.outputs.emplace_back();
  plan.dtype = input.dtype();
  plan.sizes = DimVector(input.sizes());
}

// Without a kernel: u = uniform_ with the counters prepare reserved, then
// where(u < 1 - p, input / (1 - p), 0). u is float32 (float64 for float64
// inputs) so the keep probability is not limited by 16-bit resolution.
// Its gradient is the same draw applied to the gradient (the derivative
// below).
void dropout_composite(OpCall& call) {
  const Tensor& input = call.arg(0);
  const double p = call.values[0].u.f;
  if (p == 1) {  // as PyTorch: input * 0 (and no infinite scale for autograd)
    call.outputs[0].result = input * 0.0;
    return;
  }
  const DType udt = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor u = empty(input.sizes(), udt, input.device());
  OpCall draw(Dispatcher::instance().op("uniform_"));
  draw.device = u.device();
  draw.args.push_back(&u);
  draw.values.push_back(detail::float_value(0.0));
  draw.values.push_back(detail::float_value(1.0));
  draw.values.push_back(call.values[2]);  // the reserved {seed, offset}
  prepare_self_output(draw);
  run_prepared(draw);
  // 0-d tensors of the compute dtypes rather than C++ numbers: a wrapped
  // double is stored as float32 (Scalar::default_dtype), which would round
  // 1 - p and the scale for float64 inputs.
  const Tensor keep = full({}, 1.0 - p, udt, input.device());
  const Tensor scale = full({}, 1.0 / (1.0 - p), input.dtype(), input.device());
  call.outputs[0].result = where(lt(u, keep), mul(input, scale), 0.0);
}

LOOM_CORE_OP(dropout_op,
             "dropout(Tensor input, float p, bool train, *, Generator? generator=None) -> Tensor",
             prepare_dropout, dropout_composite)

// The gradient is dropout of the gradient with the same draw: element i
// kept (and scaled by 1/(1 - p)) exactly where the forward kept it. The
// node's saved values hold the {seed, offset} counters prepare reserved, so
// the draw repeats without a mask kept in memory, and in one kernel where
// the device has one (PyTorch's native dropout keeps a mask instead).
LOOM_DERIVATIVE(dropout_op, "NativeDropoutBackward0", autograd::none(), autograd::none(),
                [](autograd::BackwardContext& c) {
                  // In the input's dtype: the draw's precision (float32, or float64
                  // for float64) depends on it, so another dtype would keep other
                  // elements.
                  const Tensor g = c.grad().to(c.input_dtype(0));
                  const double p = c.float_arg(0);  // 0 when the forward did not train
                  if (p == 0) return c.set(0, g);
                  if (p == 1) return c.set(0, g * 0.0);  // as the forward: nothing kept
                  const IntArrayRef counters = c.int_list(2);
                  c.set(0, detail::run_op(dropout_op(), {&g},
                                          {detail::float_value(p), detail::bool_value(true),
                                           detail::int_list_value(counters)}));
                })
LOOM_DERIVATIVE_SAVES_RESOLVED_VALUES(dropout_op)

LOOM_CORE_OP(embedding_op, "embedding(Tensor weight, Tensor indices, int? padding_idx=None) -> Tensor",
             prepare_embedding, nullptr)
// The rows of the gradient added into the rows they were read from
// (repeated indices add up); the padding row gets none. values[0] is
// padding_idx as the caller gave it (it may be negative).
LOOM_DERIVATIVE(embedding_op, "EmbeddingBackward0", autograd::inputs(1), autograd::none(),
                [](autograd::BackwardContext& c) {
                  const int64_t rows = c.input_sizes(0)[0], cols = c.input_sizes(0)[1];
                  const Tensor indices = c.input(1).reshape({-1});
                  Tensor g = c.grad().reshape({-1, cols});
                  if (!c.is_none(0)) {
                    const int64_t pad = c.int_arg(0) < 0 ? c.int_arg(0) + rows : c.int_arg(0);
                    g = masked_fill(g, eq(indices, Scalar(pad)).unsqueeze(1), 0.0);
                  }
                  Tensor w = zeros({rows, cols}, g.dtype(), g.device());
                  c.set(0, index_add_(w, 0, indices, g));
                })

}  // namespace

// PyTorch draws a Bernoulli(1 - p) mask, divides it by 1 - p and multiplies;
// here element i is kept when the i-th uniform draw is < 1 - p, in one pass
// where a kernel exists.
Tensor dropout(const Tensor& input, double p, bool training) {
  check_dropout_p(p);
  if (!training || p == 0 || input.numel() == 0) return input;
  LOOM_CHECK(input.is_floating_point(), "dropout: expected a floating point input, got ",
             name(input.dtype()));
  // As PyTorch: input * 0, so NaN and inf stay NaN.
  if (p == 1) return input * 0.0;
  return detail::run_op(dropout_op(), {&input},
                        {detail::float_value(p), detail::bool_value(true), detail::none_value()});
}

Tensor& dropout_(Tensor& input, double p, bool training) {
  check_dropout_p(p);
  if (!training || p == 0 || input.numel() == 0) return input;
  input.copy_(dropout(input, p, training));
  return input;
}

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx) {
  LoomValue pad{};
  if (padding_idx) {
    pad.kind = LOOM_VALUE_INT;
    pad.u.i = *padding_idx;
  }
  return detail::run_op(embedding_op(), {&weight, &indices}, {pad});
}

}  // namespace loom
