// tensor_methods.cpp — Tensor methods that forward to the op functions of
// the same name (loom/ops.h and loom/ops/*.h), as libtorch offers them.
#include <loom/ops.h>
#include <loom/ops/indexing.h>
#include <loom/ops/nn.h>
#include <loom/ops/shape.h>

namespace loom {

Tensor Tensor::mean() const { return loom::mean(*this); }
Tensor Tensor::mean(IntArrayRef dim, bool keepdim) const { return loom::mean(*this, dim, keepdim); }
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const { return loom::amax(*this, dim, keepdim); }
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const { return loom::amin(*this, dim, keepdim); }
std::pair<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const { return loom::max(*this, dim, keepdim); }
std::pair<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const { return loom::min(*this, dim, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return loom::argmax(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return loom::argmin(*this, dim, keepdim); }
Tensor Tensor::softmax(int64_t dim) const { return loom::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return loom::log_softmax(*this, dim); }
Tensor Tensor::permute(IntArrayRef dims) const { return loom::permute(*this, dims); }
Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const { return loom::flatten(*this, start_dim, end_dim); }
Tensor Tensor::pow(Scalar exponent) const { return loom::pow(*this, exponent); }
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const { return loom::masked_fill(*this, mask, value); }
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return loom::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return loom::gather(*this, dim, index); }

}  // namespace loom
