// loom/ops/nn.h — the op catalog, part: neural-net functions (softmax, attention, normalisation, dropout, embedding, losses, pad).
// Included by loom/ops.h; the ops are defined in core/src/ops_nn.cpp.
#pragma once

#include <loom/tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom {

// ---- dropout, embedding, pad (core/src/ops_dropout_embedding.cpp, ops_pad.cpp) ----

// Zeroes each element with probability p and scales the rest by 1/(1-p)
// (torch.nn.functional.dropout). The mask comes from loom's default
// generator, so manual_seed makes it reproducible, with the same mask on
// every device. training=false, p = 0 or an empty input return `input`
// itself; p = 1 gives input * 0 (zeros; NaN stays NaN, as PyTorch). p
// outside [0, 1] and non-floating inputs are errors.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
// In place: `input` becomes dropout(input, p, training); returns it.
Tensor& dropout_(Tensor& input, double p = 0.5, bool training = true);

// weight[indices] (torch.nn.functional.embedding): `weight` is 2-D
// [num_embeddings, embedding_dim], `indices` int64 or int32 of any shape;
// the result has shape indices.shape + [embedding_dim] and weight's dtype.
// An index outside [0, num_embeddings) is an error naming it. padding_idx
// (negative counts from the end) only affects gradients, so the forward
// result is the same with or without it; it is validated.
Tensor embedding(const Tensor& weight, const Tensor& indices,
                 std::optional<int64_t> padding_idx = std::nullopt);

// torch.nn.functional.pad. `pad` lists (before, after) pairs starting from the
// last dimension: {left, right, top, bottom, front, back}.
//   "constant": any number of dims (pad.size()/2 <= input.dim()), fills
//               with `value` (default 0); negative pads crop.
//   "reflect":  the last 1, 2 or 3 dims of a 2-D/3-D, 3-D/4-D or 4-D/5-D
//               input; each pad must be < that dim's size; mirrors without
//               repeating the edge.
//   "replicate": same shapes as reflect; repeats the edge element.
// `value` is only allowed with "constant".
Tensor pad(const Tensor& input, const std::vector<int64_t>& pad,
           const std::string& mode = "constant", std::optional<double> value = std::nullopt);

// ---- end of dropout, embedding, pad ------------------------------------------------

}  // namespace loom
