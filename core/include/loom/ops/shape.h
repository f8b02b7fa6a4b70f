// loom/ops/shape.h — the op catalog, part: views, joins, splits and reorderings (permute, flatten, cat, stack, split, repeat, flip, roll, tril/triu, sort, topk).
// Included by loom/ops.h. Views are defined in core/src/ops/ops_shape_views.cpp,
// copying ops in core/src/ops/ops_shape.cpp, sorting in core/src/ops/ops_sort.cpp.
//
// Semantics are torch 1.13's: dims may be negative (counted from the end),
// views share storage with their base (a write through one shows in the
// other), and every bad argument throws loom::Error naming the op.
#pragma once

#include <loom/tensor.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace loom {

// ---- views (no copy; share `a`'s storage) ------------------------------------------
// Reorders the dims: result dim i is a's dim dims[i]; dims is a permutation.
Tensor permute(const Tensor& a, IntArrayRef dims);
// Transpose of a tensor with <= 2 dims (0-d and 1-d come back unchanged).
Tensor t(const Tensor& a);
// Merges dims start_dim..end_dim into one. A view when the strides allow,
// else a copy (as torch.flatten); a 0-d tensor becomes shape [1].
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
// Splits dim into `sizes` (one entry may be -1, inferred).
Tensor unflatten(const Tensor& a, int64_t dim, IntArrayRef sizes);
// Moves dim `source` to position `destination`; the others keep their order.
Tensor movedim(const Tensor& a, int64_t source, int64_t destination);
Tensor movedim(const Tensor& a, IntArrayRef source, IntArrayRef destination);
// a[start:end:step] along dim, Python-style: negative bounds count from the
// end, out-of-range bounds are clamped, nullopt means the whole range;
// step must be positive.
Tensor slice(const Tensor& a, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
// Pieces of split_size along dim (the last may be smaller).
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
// torch.split_with_sizes: pieces of the given sizes, which must sum to a's size at dim.
std::vector<Tensor> split(const Tensor& a, IntArrayRef split_sizes, int64_t dim = 0);
// At most `chunks` pieces of ceil(size / chunks) (torch.chunk: may return fewer).
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
// Every slice along dim, with that dim removed.
std::vector<Tensor> unbind(const Tensor& a, int64_t dim = 0);

// ---- copying ops ----------------------------------------------------------------------
// Joins along dim. Dtypes promote as torch.cat; 1-D tensors of size 0 are
// skipped (PyTorch's legacy rule); every other tensor must match the first
// non-skipped one in ndim and in every size but dim's.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Joins equally-shaped tensors along a new dim (in [-(ndim+1), ndim]).
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Tiles a: sizes has >= a.dim() entries (extra ones prepend dims).
Tensor repeat(const Tensor& a, IntArrayRef sizes);
// torch.tile: like repeat, but fewer entries than dims are padded with 1s in front.
Tensor tile(const Tensor& a, IntArrayRef dims);
// Reverses the order of elements along each of dims.
Tensor flip(const Tensor& a, IntArrayRef dims);
// Rotates along dims by shifts (same length). Without dims, the flattened
// tensor is rolled by the single shift and the shape restored.
Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims = {});
// Lower / upper triangle of the last two dims (batched over the rest):
// tril keeps j <= i + diagonal, triu keeps j >= i + diagonal, the rest is 0.
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor triu(const Tensor& a, int64_t diagonal = 0);
Tensor& tril_(Tensor& a, int64_t diagonal = 0);
Tensor& triu_(Tensor& a, int64_t diagonal = 0);

// ---- sorting ----------------------------------------------------------------------------
// (values, int64 indices) sorted along dim. NaN sorts above every number
// (last ascending, first descending). Equal elements keep their order in
// loom whether or not `stable` is asked for (a deterministic superset of PyTorch).
std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim = -1, bool descending = false,
                               bool stable = false);
Tensor argsort(const Tensor& a, int64_t dim = -1, bool descending = false, bool stable = false);
// The k largest (or smallest) along dim, as (values, int64 indices); sorted
// best first when `sorted`. NaN counts as the largest value. Not for bool.
std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim = -1, bool largest = true,
                               bool sorted = true);

}  // namespace loom
