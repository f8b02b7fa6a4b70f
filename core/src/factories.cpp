// factories.cpp — empty, zeros, ones, full, arange, rand, randn, *_like.
#include <loom/error.h>
#include <loom/op_call.h>
#include <loom/ops.h>

#include <cmath>
#include <limits>

namespace loom {

Tensor empty(IntArrayRef sizes, DType dtype, Device device) {
  for (size_t i = 0; i < sizes.size(); ++i)
    LOOM_CHECK(sizes[i] >= 0, "empty: negative dimension ", sizes[i], " in size ", shape_str(sizes));
  return detail::empty_contiguous(device, dtype, sizes);
}

Tensor zeros(IntArrayRef sizes, DType dtype, Device device) {
  return empty(sizes, dtype, device).fill_(0);
}
Tensor ones(IntArrayRef sizes, DType dtype, Device device) {
  return empty(sizes, dtype, device).fill_(1);
}
Tensor full(IntArrayRef sizes, Scalar value, std::optional<DType> dtype, Device device) {
  return empty(sizes, dtype.value_or(value.default_dtype()), device).fill_(value);
}

Tensor scalar_tensor(Scalar value, Device device) {
  // Stored at full width, as PyTorch's wrapped numbers are: promotion sees
  // only its category, so `f32 * 0.1` stays float32 while `f64 * 0.1` keeps
  // every bit of 0.1 instead of a float32 rounding of it.
  const DType wide = value.is_floating_point() ? DType::Float64 : value.default_dtype();
  Tensor t = full({}, value, wide, device);
  t.impl()->set_wrapped_number(true);
  return t;
}

Tensor arange(Scalar end, std::optional<DType> dtype, Device device) {
  return arange(0, end, 1, dtype, device);
}

Tensor arange(Scalar start, Scalar end, Scalar step, std::optional<DType> dtype, Device device) {
  const bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  const DType t = dtype.value_or(floating ? kDefaultFloat : DType::Int64);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  LOOM_CHECK(st != 0, "arange: step must be nonzero");
  LOOM_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range ", s, " -> ", e);
  LOOM_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound ", e,
             " and lower bound ", s, " are inconsistent with step sign ", st);
  const auto n = static_cast<int64_t>(std::ceil((e - s) / st));
  // Computed on the host in the widest type, then cast and moved once.
  if (floating || is_floating_point(t)) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = s + static_cast<double>(i) * st;
    return from_vector(v, {n}).to(t).to(device);
  }
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start.to_int() + i * step.to_int();
  return from_vector(v, {n}).to(t).to(device);
}

Tensor rand(IntArrayRef sizes, DType dtype, Device device, const std::optional<Generator>& generator) {
  return empty(sizes, dtype, device).uniform_(0, 1, generator);
}
Tensor randn(IntArrayRef sizes, DType dtype, Device device, const std::optional<Generator>& generator) {
  return empty(sizes, dtype, device).normal_(0, 1, generator);
}

Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.dtype(), t.device()); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.dtype(), t.device()); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.dtype(), t.device()); }

}  // namespace loom

namespace loom {

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, DType dtype, Device device,
               const std::optional<Generator>& generator) {
  LOOM_CHECK(low < high, "randint: expected low < high, got low=", low, " and high=", high);
  LOOM_CHECK(dtype != DType::Bool || (low >= 0 && high <= 2), "randint: range [", low, ", ", high,
             ") does not fit in bool");
  // floor(u * (high - low)) + low with u uniform in [0, 1) in float64: the
  // same counter-based stream as rand, so it is reproducible on every device.
  Tensor u = empty(sizes, DType::Float64, device).uniform_(0, 1, generator);
  const Tensor span = scalar_tensor(static_cast<double>(high - low), device);
  const Tensor lo = scalar_tensor(static_cast<double>(low), device);
  return (floor(u * span) + lo).to(dtype);
}

Tensor randperm(int64_t n, DType dtype, Device device, const std::optional<Generator>& generator) {
  LOOM_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  // The largest n whose values 0 .. n-1 the dtype holds exactly.
  const auto limit = [](DType t) -> int64_t {
    switch (t) {
      case DType::Bool: return 0;
      case DType::UInt8: return 256;
      case DType::Int8: return 128;
      case DType::Int16: return 32768;
      case DType::Int32: return int64_t{1} << 31;
      case DType::Float16: return 2049;
      case DType::BFloat16: return 257;
      case DType::Float32: return int64_t{1} << 24;
      default: return std::numeric_limits<int64_t>::max();
    }
  };
  LOOM_CHECK(n <= limit(dtype), "randperm: ", n, " values do not fit in ", name(dtype), " exactly");
  // The order that sorts n uniform float64 keys: every permutation equally
  // likely (up to ties among 2^53 values), from the same counter-based
  // stream as rand.
  const Tensor keys = empty({n}, DType::Float64, device).uniform_(0, 1, generator);
  return argsort(keys, 0).to(dtype);
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, DType dtype, Device device) {
  LOOM_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  const double a = start.to_double(), b = end.to_double();
  std::vector<double> v(static_cast<size_t>(steps));
  if (steps == 1) v[0] = a;
  // torch.linspace fills from both ends so that the last point is exact.
  const double step = steps > 1 ? (b - a) / static_cast<double>(steps - 1) : 0.0;
  const int64_t half = steps / 2;
  for (int64_t i = 0; i < steps && steps > 1; ++i)
    v[static_cast<size_t>(i)] = i < half ? a + step * static_cast<double>(i)
                                         : b - step * static_cast<double>(steps - 1 - i);
  return from_vector(v, {steps}).to(dtype).to(device);
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (m < 0) m = n;
  LOOM_CHECK(n >= 0, "eye: n must be non-negative, got ", n);
  Tensor out = zeros({n, m}, dtype, device);
  const int64_t diag = std::min(n, m);
  if (diag > 0) out.as_strided({diag}, {m + 1}, 0).fill_(1);  // the diagonal, as a view
  return out;
}

}  // namespace loom
