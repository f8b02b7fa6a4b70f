// loom/ops/indexing.h — the op catalog, part: gather/scatter-style indexing (index_select, gather, scatter, index_add, masked ops, nonzero, advanced indexing).
// Included by loom/ops.h. The catalog ops are defined in core/src/ops/ops_indexing.cpp
// (gather/scatter family, masked_fill) and core/src/ops/ops_indexing_select.cpp
// (nonzero, masked_select); advanced indexing (index, index_put_) is a
// composite of those in core/src/ops/ops_advanced_index.cpp.
//
// PyTorch (1.13) semantics throughout. Index tensors are int64; index_select,
// index_add and advanced indexing also take int32. An out-of-range index is an
// error naming the op, the dim, the index and the size, never a stray write.
// gather/scatter/index_select/index_add reject negative indices (as PyTorch);
// index/index_put_ wrap them.
#pragma once

#include <loom/tensor.h>

#include <optional>
#include <vector>

namespace loom {

// out[i] = self[..., index[i], ...] along `dim`; index is 0-d or 1-D.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
// out[p] = self[p with p[dim] = index[p]]; index has self's ndim and
// index.size(d) <= self.size(d) for d != dim; result has index's shape.
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);

// self[p with p[dim] = index[p]] = src[p] for every p in index's shape.
// Duplicate indices: the last write in row-major order of index wins.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, Scalar value);
// As scatter, accumulating: self[p with p[dim] = index[p]] += src[p].
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
// self[..., index[i], ...] += alpha * source[..., i, ...] along `dim`.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha = 1);
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   Scalar alpha = 1);

// `value` where the bool `mask` (broadcast) is true. The out-of-place form
// broadcasts self and mask together; the in-place form needs mask to
// broadcast to self. A tensor value must be 0-d.
Tensor masked_fill(const Tensor& self, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, Scalar value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value);
// The elements of self (broadcast with the bool mask) where mask is true, 1-D.
Tensor masked_select(const Tensor& self, const Tensor& mask);
// int64 [n, ndim]: the coordinates of the n non-zero elements, row-major.
Tensor nonzero(const Tensor& self);
// torch.nonzero(as_tuple=True): one 1-D int64 tensor per dim (one for 0-d).
std::vector<Tensor> nonzero_as_tuple(const Tensor& self);

// ---- advanced indexing (self[indices]) -------------------------------------------
// One entry per leading dim of self; nullopt is a full slice (":"). Integer
// tensors (int64, int32) broadcast together and index their dim (negative
// values wrap); a bool/uint8 mask indexes as many dims as it has (as its
// nonzero()); a 0-d mask adds a dim of size 1 (true) or 0 (false) there.
// Indices may live on another device than self. The indexed dims' result
// goes where PyTorch puts it: in place of the indexed dims when they are
// adjacent, else first.
using TensorIndices = std::vector<std::optional<Tensor>>;
Tensor index(const Tensor& self, const TensorIndices& indices);
// self[indices] = values (values broadcast to self[indices]'s shape; same
// dtype as self); accumulate adds instead, duplicates included.
Tensor& index_put_(Tensor& self, const TensorIndices& indices, const Tensor& values,
                   bool accumulate = false);
Tensor index_put(const Tensor& self, const TensorIndices& indices, const Tensor& values,
                 bool accumulate = false);

}  // namespace loom
