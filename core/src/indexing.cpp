// indexing.cpp — loom/indexing.h: PyTorch's indexing rules, once, for the
// C++ API (Tensor::index) and Python's t[...] (frontend_python's
// indexing_py.cpp converts its items to TensorIndex and calls apply).
#include <loom/error.h>
#include <loom/indexing.h>
#include <loom/ops.h>

#include <algorithm>
#include <string>

namespace loom::indexing {

TensorIndex::TensorIndex(const char* s) : kind_(EllipsisKind) {
  LOOM_CHECK(s && std::string(s) == "...", "index: a string index must be '...' (Ellipsis), got '", s ? s : "",
             "'");
}

namespace {

// How many dims of self an index consumes.
int64_t consumed(const TensorIndex& i) {
  switch (i.kind()) {
    case TensorIndex::Integer:
    case TensorIndex::SliceKind: return 1;
    case TensorIndex::TensorKind: {
      const Tensor& t = i.tensor();
      const DType d = t.dtype();
      return d == DType::Bool || d == DType::UInt8 ? t.dim() : 1;
    }
    default: return 0;
  }
}

// Python's slice.indices: start and the element count of start:stop:step
// over n elements (step > 0).
std::pair<int64_t, int64_t> adjust(const Slice& s, int64_t n) {
  const int64_t step = s.step.value_or(1);
  LOOM_CHECK(step > 0, "step must be greater than zero, got ", step);
  auto bound = [n](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp<int64_t>(x, 0, n);
  };
  const int64_t start = bound(s.start, 0), stop = bound(s.stop, n);
  const int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
  return {start, len};
}

}  // namespace

Applied apply(const Tensor& self, const std::vector<TensorIndex>& indices) {
  int64_t specified = 0;
  int ellipses = 0;
  for (const TensorIndex& it : indices) {
    specified += consumed(it);
    ellipses += it.kind() == TensorIndex::EllipsisKind;
  }
  LOOM_CHECK(ellipses <= 1, "an index can only have a single ellipsis ('...')");
  LOOM_CHECK(specified <= self.dim(), "too many indices for tensor of dimension ", self.dim(), " (got ", specified,
             ")");
  Applied a{self, {}, false};
  Tensor& r = a.view;
  int64_t dim = 0;       // in the result so far
  int64_t real_dim = 0;  // in self, for error messages
  for (const TensorIndex& it : indices) {
    switch (it.kind()) {
      case TensorIndex::Integer: {
        const int64_t n = r.size(dim);
        LOOM_CHECK(it.integer() >= -n && it.integer() < n, "index ", it.integer(), " is out of bounds for dimension ",
                   real_dim, " with size ", n);
        r = r.select(dim, it.integer());
        ++real_dim;
        break;
      }
      case TensorIndex::SliceKind: {
        const int64_t n = r.size(dim);
        const auto [start, len] = adjust(it.slice(), n);
        const int64_t step = it.slice().step.value_or(1);
        if (!(start == 0 && len == n && step == 1)) r = slice(r, dim, start, start + len * step, step);
        a.advanced.emplace_back();
        ++dim;
        ++real_dim;
        break;
      }
      case TensorIndex::NewAxis:
        r = r.unsqueeze(dim);
        a.advanced.emplace_back();
        ++dim;
        break;
      case TensorIndex::EllipsisKind: {
        const int64_t n = self.dim() - specified;
        for (int64_t k = 0; k < n; ++k) a.advanced.emplace_back();
        dim += n;
        real_dim += n;
        break;
      }
      case TensorIndex::Boolean:
        // A size-1 dim, kept or emptied by a one-element mask.
        r = r.unsqueeze(dim);
        a.advanced.emplace_back(full({1}, Scalar(it.flag()), DType::Bool, r.device()));
        a.has_advanced = true;
        ++dim;
        break;
      case TensorIndex::TensorKind: {
        const Tensor& t = it.tensor();
        LOOM_CHECK(!t.is_floating_point(), "tensors used as indices must be long, int, byte or bool tensors, got ",
                   name(t.dtype()));
        a.advanced.emplace_back(t);
        a.has_advanced = true;
        dim += consumed(it);
        real_dim += consumed(it);
        break;
      }
    }
  }
  return a;
}

Tensor get(const Tensor& self, const std::vector<TensorIndex>& indices) {
  Applied a = indexing::apply(self, indices);
  if (a.has_advanced) return index(a.view, a.advanced);
  // x[...] and x[:] still return a new tensor (an alias), as in PyTorch.
  if (a.view.is_same(self)) return self.view(self.sizes());
  return a.view;
}

void put(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value) {
  Applied a = indexing::apply(self, indices);
  const Tensor v = value.dtype() == self.dtype() && value.device() == self.device()
                       ? value
                       : value.to(self.device(), self.dtype());
  if (!a.has_advanced) {
    a.view.copy_(v);
    return;
  }
  index_put_(a.view, a.advanced, v, /*accumulate=*/false);
}

void put(Tensor& self, const std::vector<TensorIndex>& indices, Scalar value) {
  Applied a = indexing::apply(self, indices);
  // As PyTorch: the number is cast to self's dtype (2.7 -> 2 for int64),
  // not refused as fill_ refuses a lossy Scalar.
  const DType natural = value.is_bool() ? DType::Bool : value.is_integral() ? DType::Int64 : DType::Float64;
  const Tensor v = full({}, value, natural, self.device()).to(self.dtype());
  if (!a.has_advanced) {
    a.view.fill_(v.item());
    return;
  }
  index_put_(a.view, a.advanced, v, false);
}

}  // namespace loom::indexing
