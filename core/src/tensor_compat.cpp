// tensor_compat.cpp — the Tensor methods under libtorch's names
// (loom/tensor.h, "libtorch's spellings"): each is a loom op or view.
#include <loom/accessor.h>
#include <loom/error.h>
#include <loom/indexing.h>
#include <loom/ops.h>
#include <loom/tensor_options.h>

namespace loom {

Tensor Tensor::operator[](int64_t index) const {
  LOOM_CHECK(dim() > 0, "invalid index of a 0-dim tensor; use item() to get the number");
  const int64_t n = size(0);
  LOOM_CHECK(index >= -n && index < n, "index ", index, " is out of bounds for dimension 0 with size ", n);
  return select(0, index);
}

Tensor Tensor::operator[](const Tensor& index) const { return indexing::get(*this, {index}); }

Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const { return indexing::get(*this, indices); }

Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value) {
  indexing::put(*this, indices, value);
  return *this;
}

Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value) {
  indexing::put(*this, indices, value);
  return *this;
}

Tensor Tensor::mm(const Tensor& other) const { return loom::mm(*this, other); }
Tensor Tensor::norm(std::optional<Scalar> p) const { return loom::norm(*this, p); }
Tensor Tensor::norm(std::optional<Scalar> p, IntArrayRef dim, bool keepdim) const {
  return loom::norm(*this, p, dim, keepdim);
}
Tensor Tensor::all() const { return loom::all(*this); }
Tensor Tensor::all(int64_t dim, bool keepdim) const { return loom::all(*this, IntArrayRef(dim), keepdim); }
Tensor Tensor::any() const { return loom::any(*this); }
Tensor Tensor::any(int64_t dim, bool keepdim) const { return loom::any(*this, IntArrayRef(dim), keepdim); }
Tensor Tensor::max() const { return loom::max(*this); }
Tensor Tensor::min() const { return loom::min(*this); }
Tensor Tensor::std() const { return loom::std(*this); }
Tensor Tensor::var() const { return loom::var(*this); }

Tensor Tensor::squeeze() const {
  DimVector sizes;
  for (int64_t s : this->sizes())
    if (s != 1) sizes.push_back(s);
  return sizes.size() == static_cast<size_t>(dim()) ? view(this->sizes()) : reshape(sizes);
}

Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }
Tensor Tensor::view_as(const Tensor& other) const { return view(other.sizes()); }
Tensor Tensor::reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
Tensor Tensor::type_as(const Tensor& other) const { return to(other.dtype()); }
Tensor Tensor::clamp_min(Scalar min) const { return clamp(min, std::nullopt); }
Tensor Tensor::clamp_max(Scalar max) const { return clamp(std::nullopt, max); }
Tensor& Tensor::clamp_min_(Scalar min) { return clamp_(min, std::nullopt); }
Tensor& Tensor::clamp_max_(Scalar max) { return clamp_(std::nullopt, max); }
bool Tensor::is_cuda() const { return device().type_name() == "cuda"; }
Tensor Tensor::add(Scalar other, Scalar alpha) const { return loom::add(*this, scalar_tensor(other, device()), alpha); }
Tensor Tensor::sub(Scalar other, Scalar alpha) const { return loom::sub(*this, scalar_tensor(other, device()), alpha); }
Tensor Tensor::mul(Scalar other) const { return *this * other; }
Tensor Tensor::div(Scalar other) const { return *this / other; }
Tensor& Tensor::add_(Scalar other, Scalar alpha) { return add_(scalar_tensor(other, device()), alpha); }
Tensor& Tensor::sub_(Scalar other, Scalar alpha) { return sub_(scalar_tensor(other, device()), alpha); }
Tensor& Tensor::mul_(Scalar other) { return mul_(scalar_tensor(other, device())); }
Tensor& Tensor::div_(Scalar other) { return div_(scalar_tensor(other, device())); }
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  return loom::allclose(*this, other, rtol, atol, equal_nan);
}

Tensor reshape(const Tensor& self, IntArrayRef shape) { return self.reshape(shape); }

// In float64, so integer and low-precision inputs compare exactly; equal
// values (infinities included) are always close.
bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  const Tensor a = self.to(kDouble), b = other.to(kDouble);
  Tensor close = ((a - b).abs() <= b.abs() * rtol + atol) | (a == b);
  if (equal_nan) close = close | (a.isnan() & b.isnan());
  return close.all().item<bool>();
}

std::ostream& operator<<(std::ostream& os, IntArrayRef sizes) {
  os << "[";
  for (size_t i = 0; i < sizes.size(); ++i) os << (i ? ", " : "") << sizes[i];
  return os << "]";
}

TensorOptions Tensor::options() const { return TensorOptions(dtype()).device(device()); }

}  // namespace loom
