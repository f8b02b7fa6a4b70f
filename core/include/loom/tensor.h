// loom/tensor.h — the Tensor: a strided view of a Storage.
//
// A Tensor is a refcounted handle (copying it shares the data, like
// torch.Tensor). Views (view, as_strided, transpose, ...) share storage and
// differ only in sizes, strides and storage offset (in elements).
#pragma once

#include <loom/detail/intrusive_ptr.h>
#include <loom/detail/small_vector.h>
#include <loom/device.h>
#include <loom/dtype.h>
#include <loom/error.h>
#include <loom/generator.h>
#include <loom/plugin/op_tables.h>
#include <loom/plugin/half.hpp>
#include <loom/scalar.h>
#include <loom/storage.h>

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace loom {

using Half = plugin::Half;
using BFloat16 = plugin::BFloat16;

class Tensor;
class TensorOptions;
template <class T, size_t N>
class TensorAccessor;
namespace indexing {
class TensorIndex;
}  // namespace indexing
namespace autograd {
class Node;
struct AutogradMeta;  // core/src/autograd/meta.h
}  // namespace autograd

class TensorImpl : public detail::RefCounted, public detail::Pooled<TensorImpl> {
 public:
  TensorImpl(Storage storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);
  ~TensorImpl();

  const Storage& storage() const { return storage_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  bool is_contiguous() const { return contiguous_; }

  // A tensor made from a C++ number for an operator (a + 2.0): it takes part
  // in type promotion only by category, as PyTorch's wrapped numbers do.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

  // Descriptor for a kernel; points into this impl (valid while it lives).
  LoomTensorDesc desc() const;

  // Gives this tensor the shape `sizes`, row-major from its storage offset;
  // takes a fresh storage when the old one is too small (contents then
  // unspecified, as torch's resize_). Used for out= arguments: every handle
  // to this impl sees the new shape, views of the old storage keep it.
  void resize_contiguous(IntArrayRef sizes);

  // Takes `src`'s storage, dtype and geometry, keeping this impl (so every
  // handle to it, an optimizer's included, sees the new data) and its
  // autograd record. Tensor::set_data is the public, checked entry.
  void set_data_from(const TensorImpl& src);

  // --- autograd state (core/src/autograd/) ----------------------------------
  // True when this tensor is a leaf that requires grad or has a grad_fn; a
  // view also requires grad when its base does. The dispatcher's only
  // autograd cost for other tensors is this check.
  bool requires_grad() const {
    return requires_grad_ || (view_base_ && view_base_->requires_grad_);
  }
  // The autograd record, made on first need (nullptr for most tensors).
  autograd::AutogradMeta* autograd_meta() const { return autograd_.get(); }
  autograd::AutogradMeta& ensure_autograd_meta();
  void set_requires_grad_flag(bool v) { requires_grad_ = v; }
  // For a view made while grad mode was on: the tensor it is a view of (the
  // root, never itself a view). An in-place write through the view updates
  // the base's graph; the view's grad_fn follows the base's.
  TensorImpl* view_base() const { return view_base_.get(); }
  void set_view_base(detail::IntrusivePtr<TensorImpl> base) { view_base_ = std::move(base); }

 private:
  Storage storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_;
  int64_t numel_;
  DType dtype_;
  bool contiguous_;
  bool wrapped_number_ = false;
  bool requires_grad_ = false;
  std::unique_ptr<autograd::AutogradMeta> autograd_;
  detail::IntrusivePtr<TensorImpl> view_base_;
};

// Row-major strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
// Product of sizes (1 for a 0-d shape).
int64_t shape_numel(IntArrayRef sizes);
// "[2, 3]".
std::string shape_str(IntArrayRef sizes);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(detail::IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }

  // --- metadata -----------------------------------------------------------
  DType dtype() const { return checked()->dtype(); }
  Device device() const { return checked()->device(); }
  IntArrayRef sizes() const { return checked()->sizes(); }
  IntArrayRef strides() const { return checked()->strides(); }
  std::vector<int64_t> shape() const { auto s = sizes(); return {s.begin(), s.end()}; }
  int64_t dim() const { return checked()->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return checked()->numel(); }
  int64_t size(int64_t dim) const;    // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t storage_offset() const { return checked()->storage_offset(); }
  size_t element_size() const { return itemsize(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const { return checked()->is_contiguous(); }
  bool is_floating_point() const { return loom::is_floating_point(dtype()); }
  const Storage& storage() const { return checked()->storage(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  // Pointer to the first element, on the tensor's device.
  void* data_ptr() const;
  // Typed host pointer; checks the dtype and that the memory is host memory.
  template <class T>
  T* data_ptr() const;

  // --- views --------------------------------------------------------------
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor view(IntArrayRef sizes) const;  // one -1 allowed; needs compatible strides
  Tensor reshape(IntArrayRef sizes) const;  // view when possible, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // 2-D transpose
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(IntArrayRef sizes) const;  // -1 keeps a size; broadcast via stride 0
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor contiguous() const;  // self when already contiguous

  // --- conversion ---------------------------------------------------------
  // Self when already there. With non_blocking, a copy between pinned host
  // memory (pin_memory) and its device type may still be running on the
  // device's current stream when this returns (torch's non_blocking=True):
  // synchronize that stream, or wait for an event recorded after the copy,
  // before the host reads the result or writes the source. A device-to-host
  // copy with non_blocking lands in pinned memory when the source's device
  // type has it. Every other copy completes before it returns.
  Tensor to(Device device, bool non_blocking = false) const;
  Tensor to(DType dtype) const;     // self when already that dtype
  Tensor to(Device device, DType dtype) const;
  Tensor clone() const;
  Tensor cpu() const;
  // A contiguous copy of this CPU tensor in page-locked host memory of
  // `device_type`'s plugin (ABI 1.3 host_allocate), from which copies to and
  // from that device can run asynchronously; self when already pinned for
  // it. Throws for a tensor not on the CPU, or a device type without pinned
  // memory (or without devices: the plugin says why).
  Tensor pin_memory(std::string_view device_type = "cuda") const;
  // Whether this tensor's memory lies in a pinned host block (any device type's).
  bool is_pinned() const;
  // The single element as T (the tensor must have exactly one element).
  template <class T>
  T item() const;
  Scalar item() const;
  // Every element as T, in row-major order (copies to host).
  template <class T>
  std::vector<T> to_vector() const;

  // --- ops (see loom/ops.h) -------------------------------------------------
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  Tensor neg() const;
  Tensor relu() const;
  Tensor exp() const;
  Tensor& neg_();
  Tensor& relu_();
  Tensor& exp_();
#define LOOM_UNARY_METHODS(op, ...) \
  Tensor op() const;                \
  Tensor& op##_();
  LOOM_UNARY_OPS(LOOM_UNARY_METHODS)
#undef LOOM_UNARY_METHODS
#define LOOM_PREDICATE_METHODS(op) Tensor op() const;
  LOOM_PREDICATE_OPS(LOOM_PREDICATE_METHODS)
#undef LOOM_PREDICATE_METHODS
#define LOOM_BINARY_METHODS(op, rule, inplace, F) \
  Tensor op(const Tensor& other) const;        \
  LOOM_BINARY_INPLACE_METHOD_##inplace(op)
#define LOOM_BINARY_INPLACE_METHOD_0(op)
#define LOOM_BINARY_INPLACE_METHOD_1(op) Tensor& op##_(const Tensor& other);
  LOOM_BINARY_OPS(LOOM_BINARY_METHODS)
#undef LOOM_BINARY_METHODS
  Tensor round(int64_t decimals = 0) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& div_(const Tensor& other, const std::optional<std::string>& rounding_mode = std::nullopt);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  Tensor sum() const;
  Tensor sum(IntArrayRef dim, bool keepdim = false) const;
  // Common ops as methods, as libtorch has them (tensor_methods.cpp; each
  // is the loom:: function of the same name).
  Tensor mean() const;
  Tensor mean(IntArrayRef dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dim = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dim = {}, bool keepdim = false) const;
  std::pair<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::pair<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor pow(Scalar exponent) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor matmul(const Tensor& other) const;
  Tensor& fill_(Scalar value);
  Tensor& zero_();
  Tensor& copy_(const Tensor& src);
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  // From `generator`, else the default generator of this tensor's device.
  Tensor& uniform_(double from = 0, double to = 1, const std::optional<Generator>& generator = std::nullopt);
  Tensor& normal_(double mean = 0, double std = 1, const std::optional<Generator>& generator = std::nullopt);

  // --- every other op whose first argument is self ---------------------------
  // Generated from the op catalog (core/tools/gen_tensor_methods.cpp), as
  // Python's Tensor methods are: x.lerp(end, 0.5), x.cumsum(1), x.tril_().
  // A name declared by hand anywhere in this class keeps only its
  // hand-written overloads, plus, for the elementwise binary ops, a number
  // form none of them could take (x.fmod(2) beside fmod(const Tensor&)).
#include <loom/detail/tensor_methods_generated.inc>

  // --- autograd (loom/autograd.h) -------------------------------------------
  bool requires_grad() const { return checked()->requires_grad(); }
  // Makes this leaf require grad (floating-point dtypes only); an error on a
  // non-leaf, whose requires_grad follows from its inputs.
  Tensor& requires_grad_(bool requires_grad = true);
  // A leaf: made by the user rather than by an op that recorded a grad_fn.
  bool is_leaf() const;
  // The accumulated gradient (undefined until a backward reaches it).
  const Tensor& grad() const;
  Tensor& mutable_grad();
  // The node that computes this tensor's gradient's effect on its inputs
  // (nullptr for leaves and tensors that do not require grad).
  detail::IntrusivePtr<autograd::Node> grad_fn() const;
  // Which output of grad_fn this tensor is.
  uint32_t output_nr() const;
  // The same data and shape, outside the graph (shares the version counter).
  Tensor detach() const;
  Tensor& detach_();
  // Makes this tensor use `data`'s memory, dtype, device and shape, keeping
  // its identity, requires_grad and .grad (torch's `param.data = data`):
  // how Module::to moves parameters that optimizers already hold. Only for
  // leaves that are not views (others are refused).
  Tensor& set_data(const Tensor& data);
  // Keep .grad for a non-leaf after backward.
  void retain_grad();
  bool retains_grad() const;
  // `hook` sees (and may replace) this tensor's gradient during backward.
  int64_t register_hook(std::function<Tensor(const Tensor&)> hook);
  void remove_hook(int64_t id);
  // Backward from this tensor (see autograd::backward).
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // How many in-place writes this tensor's memory has seen.
  uint32_t _version() const { return storage()->version(); }

  // Like PyTorch's repr: tensor([[1., 2.], [3., 4.]], device='sim:0').
  std::string str() const;
  // As libtorch prints it (what operator<< writes): the values, then
  // "[ CPUFloatType{2,3} ]".
  std::string toString() const;

  // --- libtorch's spellings (tensor_compat.cpp) -------------------------------
  Tensor operator[](int64_t index) const;        // select(0, index)
  Tensor operator[](const Tensor& index) const;  // index({index})
  // t.index({Slice(), 0}) and t.index_put_({...}, value): loom/indexing.h.
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& value);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value);
  Tensor mm(const Tensor& other) const;
  // p = 2 by default; over `dim` when given.
  Tensor norm(std::optional<Scalar> p = std::nullopt) const;
  Tensor norm(std::optional<Scalar> p, IntArrayRef dim, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor max() const;  // of every element (max(dim) gives values and indices)
  Tensor min() const;
  Tensor squeeze() const;  // every size-1 dim
  Tensor std() const;
  Tensor var() const;
  Tensor expand_as(const Tensor& other) const;
  Tensor view_as(const Tensor& other) const;
  Tensor reshape_as(const Tensor& other) const;
  Tensor type_as(const Tensor& other) const;  // to other's dtype
  Tensor toType(DType dtype) const { return to(dtype); }
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(Scalar max) const;
  Tensor& clamp_min_(Scalar min);
  Tensor& clamp_max_(Scalar max);
  // Arithmetic with a number, as libtorch's methods (x.div(255), x.mul_(2)).
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor mul(Scalar other) const;
  Tensor div(Scalar other) const;
  Tensor& add_(Scalar other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor& mul_(Scalar other);
  Tensor& div_(Scalar other);
  // |self - other| <= atol + rtol |other| everywhere (loom::allclose).
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) const;
  DType scalar_type() const { return dtype(); }
  bool is_cuda() const;
  Tensor& set_requires_grad(bool requires_grad) { return requires_grad_(requires_grad); }
  // This tensor's dtype and device (requires_grad unset), for factories.
  TensorOptions options() const;
  // Elements of a CPU tensor by index, t.accessor<float, 2>()[i][j]; T must
  // be the dtype's C++ type. Not for temporaries (the tensor must outlive
  // the accessor).
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const&;
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() && = delete;

 private:
  TensorImpl* checked() const {
    LOOM_CHECK(impl_, "operation on an undefined tensor");
    return impl_.get();
  }
  detail::IntrusivePtr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);
// Sizes as libtorch prints them: [4, 1, 28, 28].
std::ostream& operator<<(std::ostream& os, IntArrayRef sizes);

// libtorch's free functions of the same names (tensor_compat.cpp).
Tensor reshape(const Tensor& self, IntArrayRef shape);
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);

namespace detail {
// A view of `self`'s storage; in grad mode it is tracked as a view and gets
// a grad_fn named `grad_fn_name` when `self` requires grad (null: none, the
// caller records one node for several views, as split does). `expand`: the
// view repeats elements (stride 0), so its gradient is summed back.
Tensor make_view(const Tensor& self, IntArrayRef sizes, IntArrayRef strides, int64_t offset,
                 const char* grad_fn_name, bool expand = false);
}  // namespace detail

// Tensor from host values of type T (the dtype follows T) with `sizes`.
template <class T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes, Device device = cpu_device());

// C++ type for a dtype and back.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<Half>() { return DType::Float16; }
template <> constexpr DType dtype_of<BFloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

}  // namespace loom
