// ops_dropout_embedding.cpp — dropout (a composite over uniform_, so it uses
// the default generator and manual_seed reproduces it) and embedding (an op
// with a kernel: rows of weight gathered by integer indices).
#include "core_op.h"

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

LOOM_CORE_OP(embedding_op, "embedding(Tensor weight, Tensor indices, int? padding_idx=None) -> Tensor",
             prepare_embedding, nullptr)

}  // namespace

// PyTorch draws a Bernoulli(1 - p) mask, divides it by 1 - p and multiplies;
// here a uniform draw u keeps an element when u < 1 - p, in float32 (float64
// for float64 inputs) so the keep probability is not limited by 16-bit
// resolution.
Tensor dropout(const Tensor& input, double p, bool training) {
  check_dropout_p(p);
  if (!training || p == 0 || input.numel() == 0) return input;
  LOOM_CHECK(input.is_floating_point(), "dropout: expected a floating point input, got ",
             name(input.dtype()));
  // As PyTorch: input * 0, so NaN and inf stay NaN.
  if (p == 1) return input * 0.0;
  const DType udt = input.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Tensor u = empty(input.sizes(), udt, input.device());
  u.uniform_();
  return where(lt(u, 1.0 - p), input * (1.0 / (1.0 - p)), 0.0);
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
