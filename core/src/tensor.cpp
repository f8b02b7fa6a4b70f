// tensor.cpp — TensorImpl metadata and the view operations.
#include "autograd/meta.h"

#include <loom/error.h>
#include <loom/plugin.hpp>
#include <loom/tensor.h>

#include "core_op.h"
#include "view_ops.h"

#include <algorithm>

namespace loom {

namespace {
bool compute_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}
}  // namespace

TensorImpl::TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      storage_offset_(storage_offset),
      numel_(shape_numel(sizes)),
      dtype_(dtype),
      contiguous_(compute_contiguous(sizes, strides)) {}

void TensorImpl::resize_contiguous(IntArrayRef sizes) {
  const size_t needed =
      static_cast<size_t>(storage_offset_ + shape_numel(sizes)) * itemsize(dtype_);
  if (needed > storage_->nbytes()) {
    storage_ = allocate_storage(device(), static_cast<size_t>(shape_numel(sizes)) * itemsize(dtype_));
    storage_offset_ = 0;
  }
  sizes_ = DimVector(sizes);
  strides_ = contiguous_strides(sizes);
  numel_ = shape_numel(sizes);
  contiguous_ = true;
}

void TensorImpl::set_data_from(const TensorImpl& src) {
  storage_ = src.storage_;
  sizes_ = src.sizes_;
  strides_ = src.strides_;
  storage_offset_ = src.storage_offset_;
  numel_ = src.numel_;
  dtype_ = src.dtype_;
  contiguous_ = src.contiguous_;
}

LoomTensorDesc TensorImpl::desc() const {
  LoomTensorDesc d;
  d.struct_size = sizeof d;
  d.data = storage_->data();
  d.device = storage_->device().abi();
  d.ndim = static_cast<int32_t>(sizes_.size());
  d.dtype = static_cast<int32_t>(dtype_);
  d.shape = sizes_.data();
  d.strides = strides_.data();
  d.byte_offset = static_cast<uint64_t>(storage_offset_) * itemsize(dtype_);
  return d;
}

namespace {
int64_t wrap(int64_t dim, int64_t ndim, const char* what) {
  const int64_t lo = -std::max<int64_t>(ndim, 1), hi = std::max<int64_t>(ndim, 1) - 1;
  LOOM_CHECK(dim >= lo && dim <= hi, what, ": dimension ", dim, " is out of range for a ", ndim,
             "-d tensor (expected [", lo, ", ", hi, "])");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}
}  // namespace

int64_t Tensor::size(int64_t d) const { return sizes()[wrap(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap(d, dim(), "stride")]; }

void* Tensor::data_ptr() const {
  return static_cast<char*>(storage()->data()) + storage_offset() * element_size();
}

template <class T>
T* Tensor::data_ptr() const {
  LOOM_CHECK(dtype() == dtype_of<T>(), "data_ptr<", name(dtype_of<T>()), ">() called on a tensor of dtype ",
             name(dtype()));
  LOOM_CHECK(device().is_host(), "data_ptr<T>() needs host memory but the tensor is on ",
             device().str(), "; use .cpu() first");
  return static_cast<T*>(data_ptr());
}
#define LOOM_INSTANTIATE_DATA_PTR(Name, py, code, dl, bits) \
  template plugin::DTypeTraits<code>::type* Tensor::data_ptr<plugin::DTypeTraits<code>::type>() const;
LOOM_DTYPE_LIST(LOOM_INSTANTIATE_DATA_PTR)
#undef LOOM_INSTANTIATE_DATA_PTR

Tensor Tensor::as_strided(IntArrayRef sz, IntArrayRef st, std::optional<int64_t> offset) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("as_strided", *this, {detail::int_list_value(sz), detail::int_list_value(st), offset ? detail::int_value(*offset) : detail::none_value()});
  return detail::make_view(*this, sz, st, offset.value_or(storage_offset()), "AsStridedBackward0");
}

namespace detail {
Tensor make_view(const Tensor& self, IntArrayRef sz, IntArrayRef st, int64_t off,
                 const char* grad_fn_name, bool expand) {
  LOOM_CHECK(sz.size() == st.size(), "as_strided: got ", sz.size(), " sizes but ", st.size(),
             " strides");
  LOOM_CHECK(off >= 0, "as_strided: negative storage offset ", off);
  int64_t max_index = off;
  for (size_t i = 0; i < sz.size(); ++i) {
    LOOM_CHECK(sz[i] >= 0, "as_strided: negative size ", sz[i], " at dim ", i);
    LOOM_CHECK(st[i] >= 0, "as_strided: negative stride ", st[i], " at dim ", i);
    if (sz[i] == 0) max_index = -1;
    else if (max_index >= 0) max_index += (sz[i] - 1) * st[i];
  }
  if (max_index >= 0) {
    const int64_t needed = (max_index + 1) * static_cast<int64_t>(self.element_size());
    LOOM_CHECK(needed <= static_cast<int64_t>(self.storage()->nbytes()), "as_strided: view of size ",
               shape_str(sz), " with strides ", shape_str(st), " and offset ", off, " needs ",
               needed, " bytes but the storage has ", self.storage()->nbytes());
  }
  Tensor view(make_intrusive<TensorImpl>(self.storage(), self.dtype(), sz, st, off));
  if (autograd::GradMode::is_enabled()) autograd::detail::record_view(self, view, grad_fn_name, expand);
  return view;
}
}  // namespace detail

namespace {
// The shape `sizes` with one -1 inferred from numel, or throws.
DimVector infer_size(IntArrayRef sizes, int64_t numel, const char* op) {
  DimVector out(sizes);
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      LOOM_CHECK(infer_at < 0, op, ": only one dimension can be -1, got ", shape_str(sizes));
      infer_at = static_cast<int64_t>(i);
    } else {
      LOOM_CHECK(out[i] >= 0, op, ": invalid size ", out[i], " in ", shape_str(sizes));
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    LOOM_CHECK(known != 0 && numel % known == 0, op, ": shape ", shape_str(sizes),
               " is invalid for input of size ", numel);
    out[infer_at] = numel / known;
  }
  LOOM_CHECK(shape_numel(out) == numel, op, ": shape ", shape_str(sizes),
             " is invalid for input of size ", numel);
  return out;
}

// Strides for viewing (sizes, strides) as `shape` without copying, if any
// exist (PyTorch's computeStride): each run of merged dims must be contiguous
// within itself.
std::optional<DimVector> view_strides(IntArrayRef old_sizes, IntArrayRef old_strides,
                                      IntArrayRef shape) {
  DimVector out(shape.size(), 0);
  if (old_sizes.empty()) {
    for (auto& s : out) s = 1;
    return out;
  }
  if (shape_numel(old_sizes) == 0) return contiguous_strides(shape);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    if (tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 &&
         old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}
}  // namespace

Tensor Tensor::view(IntArrayRef sz) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("view", *this, {detail::int_list_value(sz)});
  DimVector shape = infer_size(sz, numel(), "view");
  auto st = view_strides(sizes(), strides(), shape);
  LOOM_CHECK(st.has_value(), "view: cannot view a tensor of size ", shape_str(sizes()),
             " and strides ", shape_str(strides()), " as ", shape_str(shape),
             " without copying; use reshape()");
  return detail::make_view(*this, shape, *st, storage_offset(), "ViewBackward0");
}

Tensor Tensor::reshape(IntArrayRef sz) const {
  // Captured as a view of the sizes as given (-1 kept), after a copy when
  // the layout needs one.
  if (detail::capturing()) [[unlikely]] {
    const DimVector shape = infer_size(sz, numel(), "reshape");
    return (view_strides(sizes(), strides(), shape) ? *this : contiguous()).view(sz);
  }
  DimVector shape = infer_size(sz, numel(), "reshape");
  if (auto st = view_strides(sizes(), strides(), shape)) return detail::make_view(*this, shape, *st, storage_offset(), "ViewBackward0");
  return contiguous().view(shape);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("transpose.int", *this, {detail::int_value(d0), detail::int_value(d1)});
  d0 = wrap(d0, dim(), "transpose");
  d1 = wrap(d1, dim(), "transpose");
  if (dim() == 0) return *this;
  DimVector sz(sizes()), st(strides());
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return detail::make_view(*this, sz, st, storage_offset(), "TransposeBackward0");
}

Tensor Tensor::t() const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("t", *this, {});
  LOOM_CHECK(dim() <= 2, "t() expects a tensor with <= 2 dimensions, but it has ", dim());
  if (dim() < 2) return detail::make_view(*this, sizes(), strides(), storage_offset(), "TBackward0");
  DimVector sz(sizes()), st(strides());
  std::swap(sz[0], sz[1]);
  std::swap(st[0], st[1]);
  return detail::make_view(*this, sz, st, storage_offset(), "TBackward0");
}

Tensor Tensor::unsqueeze(int64_t d) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("unsqueeze", *this, {detail::int_value(d)});
  LOOM_CHECK(d >= -(dim() + 1) && d <= dim(), "unsqueeze: dimension ", d,
             " is out of range for a ", dim(), "-d tensor");
  if (d < 0) d += dim() + 1;
  DimVector sz(sizes()), st(strides());
  const int64_t new_stride = d < dim() ? sz[d] * st[d] : 1;
  sz.insert(static_cast<size_t>(d), 1);
  st.insert(static_cast<size_t>(d), new_stride);
  return detail::make_view(*this, sz, st, storage_offset(), "UnsqueezeBackward0");
}

Tensor Tensor::squeeze(int64_t d) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("squeeze.dim", *this, {detail::int_value(d)});
  if (dim() == 0) return *this;
  d = wrap(d, dim(), "squeeze");
  if (sizes()[d] != 1) return *this;
  DimVector sz(sizes()), st(strides());
  sz.erase(static_cast<size_t>(d));
  st.erase(static_cast<size_t>(d));
  return detail::make_view(*this, sz, st, storage_offset(), "SqueezeBackward1");
}

Tensor Tensor::expand(IntArrayRef target) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("expand", *this, {detail::int_list_value(target)});
  LOOM_CHECK(static_cast<int64_t>(target.size()) >= dim(), "expand: the number of sizes (",
             target.size(), ") must be at least the tensor's dimensions (", dim(), ")");
  const size_t lead = target.size() - static_cast<size_t>(dim());
  DimVector sz(target.size()), st(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      LOOM_CHECK(target[i] >= 0, "expand: size -1 is not allowed in a new leading dimension");
      sz[i] = target[i];
      st[i] = 0;
      continue;
    }
    const int64_t own = sizes()[i - lead];
    const int64_t want = target[i] == -1 ? own : target[i];
    LOOM_CHECK(own == want || own == 1, "expand: the expanded size ", want,
               " must match the existing size ", own, " at dimension ", i, " (tensor size ",
               shape_str(sizes()), ", target ", shape_str(target), ")");
    sz[i] = want;
    st[i] = own == want ? strides()[i - lead] : 0;
  }
  return detail::make_view(*this, sz, st, storage_offset(), "ExpandBackward0", /*expand=*/true);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("select.int", *this, {detail::int_value(d), detail::int_value(index)});
  LOOM_CHECK(dim() > 0, "select() cannot be applied to a 0-d tensor");
  d = wrap(d, dim(), "select");
  const int64_t n = sizes()[d];
  LOOM_CHECK(index >= -n && index < n, "select: index ", index, " is out of bounds for dimension ",
             d, " with size ", n);
  if (index < 0) index += n;
  DimVector sz(sizes()), st(strides());
  const int64_t offset = storage_offset() + index * st[d];
  sz.erase(static_cast<size_t>(d));
  st.erase(static_cast<size_t>(d));
  return detail::make_view(*this, sz, st, offset, "SelectBackward0");
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  if (detail::capturing()) [[unlikely]]
    return detail::run_as_op("narrow", *this, {detail::int_value(d), detail::int_value(start), detail::int_value(length)});
  LOOM_CHECK(dim() > 0, "narrow() cannot be applied to a 0-d tensor");
  d = wrap(d, dim(), "narrow");
  const int64_t n = sizes()[d];
  if (start < 0) start += n;
  LOOM_CHECK(start >= 0 && length >= 0 && start + length <= n, "narrow: start ", start,
             " + length ", length, " exceeds dimension ", d, " of size ", n);
  DimVector sz(sizes());
  sz[d] = length;
  return detail::make_view(*this, sz, strides(), storage_offset() + start * strides()[d], "SliceBackward0");
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.toString(); }

}  // namespace loom
