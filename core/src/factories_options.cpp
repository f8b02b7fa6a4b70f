// factories_options.cpp — the TensorOptions forms of the factories
// (loom/ops.h, "creation with TensorOptions"), from_blob and tensor(...).
#include <loom/error.h>
#include <loom/ops.h>

namespace loom {
namespace {

Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.requires_grad_();
  return t;
}

DType float_or(const TensorOptions& o) { return o.dtype_or(kDefaultFloat); }

}  // namespace

Tensor empty(IntArrayRef sizes, const TensorOptions& o) {
  return finish(empty(sizes, float_or(o), o.device_or_cpu()), o);
}
Tensor zeros(IntArrayRef sizes, const TensorOptions& o) {
  return finish(zeros(sizes, float_or(o), o.device_or_cpu()), o);
}
Tensor ones(IntArrayRef sizes, const TensorOptions& o) {
  return finish(ones(sizes, float_or(o), o.device_or_cpu()), o);
}
Tensor rand(IntArrayRef sizes, const TensorOptions& o) {
  return finish(rand(sizes, float_or(o), o.device_or_cpu()), o);
}
Tensor randn(IntArrayRef sizes, const TensorOptions& o) {
  return finish(randn(sizes, float_or(o), o.device_or_cpu()), o);
}
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& o) {
  return finish(randint(low, high, sizes, o.dtype_or(DType::Int64), o.device_or_cpu()), o);
}
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& o) { return randint(0, high, sizes, o); }
Tensor randperm(int64_t n, const TensorOptions& o) {
  return finish(randperm(n, o.dtype_or(DType::Int64), o.device_or_cpu()), o);
}
Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& o) {
  return finish(linspace(start, end, steps, float_or(o), o.device_or_cpu()), o);
}
Tensor eye(int64_t n, const TensorOptions& o) { return eye(n, -1, o); }
Tensor eye(int64_t n, int64_t m, const TensorOptions& o) {
  return finish(eye(n, m, float_or(o), o.device_or_cpu()), o);
}
Tensor full_with_options(IntArrayRef sizes, Scalar value, const TensorOptions& o) {
  return finish(full(sizes, value, o.dtype_opt(), o.device_or_cpu()), o);
}
Tensor arange_with_options(Scalar start, Scalar end, Scalar step, const TensorOptions& o) {
  return finish(arange(start, end, step, o.dtype_opt(), o.device_or_cpu()), o);
}

namespace {
// t's dtype and device unless options set them.
TensorOptions like(const Tensor& t, const TensorOptions& o) {
  TensorOptions r = TensorOptions(o.dtype_or(t.dtype())).device(o.device_opt().value_or(t.device()));
  return r.requires_grad(o.requires_grad());
}
}  // namespace

Tensor empty_like(const Tensor& t, const TensorOptions& o) { return empty(t.sizes(), like(t, o)); }
Tensor zeros_like(const Tensor& t, const TensorOptions& o) { return zeros(t.sizes(), like(t, o)); }
Tensor ones_like(const Tensor& t, const TensorOptions& o) { return ones(t.sizes(), like(t, o)); }
Tensor rand_like(const Tensor& t, const TensorOptions& o) { return rand(t.sizes(), like(t, o)); }
Tensor randn_like(const Tensor& t, const TensorOptions& o) { return randn(t.sizes(), like(t, o)); }
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& o) {
  return full_with_options(t.sizes(), value, like(t, o));
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o) {
  return from_blob(data, sizes, contiguous_strides(sizes), o);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& o) {
  LOOM_CHECK(sizes.size() == strides.size(), "from_blob: ", sizes.size(), " sizes but ", strides.size(), " strides");
  const DType dtype = float_or(o);
  const Device device = o.device_or_cpu();
  LOOM_CHECK(device.is_host(), "from_blob: memory must be the host's; ", device.str(),
             " is not a host device (copy the data with .to() after wrapping it on the CPU)");
  int64_t last = 0;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    LOOM_CHECK(sizes[i] >= 0 && strides[i] >= 0, "from_blob: sizes and strides must be non-negative, got ",
               shape_str(sizes), " and ", shape_str(strides));
    empty = empty || sizes[i] == 0;
    last += (sizes[i] - 1) * strides[i];
  }
  LOOM_CHECK(data || empty, "from_blob: data is null");
  const size_t nbytes = empty ? 0 : static_cast<size_t>(last + 1) * itemsize(dtype);
  Storage storage = wrap_storage(device, data, nbytes, StorageDeleter{});  // the caller owns the memory
  return finish(Tensor(detail::make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0)), o);
}

namespace detail {

Tensor tensor_from_doubles(std::vector<double> values, IntArrayRef sizes, DType natural, const TensorOptions& o) {
  Tensor t = from_vector(values, sizes).to(o.dtype_or(natural));
  if (o.device_opt()) t = t.to(*o.device_opt());
  return finish(t, o);
}

Tensor tensor_from_int64s(std::vector<int64_t> values, IntArrayRef sizes, DType natural, const TensorOptions& o) {
  Tensor t = from_vector(values, sizes).to(o.dtype_or(natural));
  if (o.device_opt()) t = t.to(*o.device_opt());
  return finish(t, o);
}

}  // namespace detail
}  // namespace loom
