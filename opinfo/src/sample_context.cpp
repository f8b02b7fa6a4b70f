// sample_context.cpp — deterministic sample tensors and the sample registry.
#include <loom/opinfo.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

namespace loom::opinfo {

uint64_t dtype_bit(DType t) { return LOOM_DTYPE_BIT(static_cast<int>(t)); }

const uint64_t kFloatDTypes = dtype_bit(DType::Float16) | dtype_bit(DType::BFloat16) |
                              dtype_bit(DType::Float32) | dtype_bit(DType::Float64);
const uint64_t kIntegerDTypes = dtype_bit(DType::UInt8) | dtype_bit(DType::Int8) | dtype_bit(DType::Int16) |
                                dtype_bit(DType::Int32) | dtype_bit(DType::Int64);
const uint64_t kAllDTypes = kFloatDTypes | kIntegerDTypes | dtype_bit(DType::Bool);

SampleContext::SampleContext(DType dtype, uint64_t seed) : dtype_(dtype), seed_(seed) {}

namespace {

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// The range [lo, hi) narrowed to what an integer dtype holds.
std::pair<double, double> clamp_range(DType t, double lo, double hi) {
  double min = 0, max = 0;
  switch (t) {
    case DType::UInt8: min = 0, max = 255; break;
    case DType::Int8: min = -128, max = 127; break;
    case DType::Int16: min = -32768, max = 32767; break;
    default: return {lo, hi};
  }
  lo = std::max(lo, min);
  hi = std::min(hi, max + 1);
  if (hi <= lo) hi = lo + 1;
  return {lo, hi};
}

}  // namespace

Tensor SampleContext::tensor(std::vector<int64_t> shape, double lo, double hi, std::optional<DType> dtype) const {
  const DType t = dtype.value_or(dtype_);
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + ++counter_);
  const int64_t n = numel_of(shape);
  std::vector<double> v(static_cast<size_t>(n));
  if (t == DType::Bool) {
    for (double& x : v) x = static_cast<double>(rng() & 1);
  } else if (is_floating_point(t)) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (double& x : v) x = d(rng);
  } else {
    auto [l, h] = clamp_range(t, std::ceil(lo), std::ceil(hi));
    std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(l), static_cast<int64_t>(h) - 1);
    for (double& x : v) x = static_cast<double>(d(rng));
  }
  return from_vector(v, shape).to(t);
}

Tensor SampleContext::edge_values(int64_t n, std::optional<DType> dtype) const {
  const DType t = dtype.value_or(dtype_);
  std::vector<double> pool;
  if (is_floating_point(t)) {
    const double inf = std::numeric_limits<double>::infinity();
    // Largest and smallest normal of the dtype, so the cast keeps them.
    double max = 65504.0, tiny = 6.103515625e-05;
    if (t == DType::BFloat16) max = 3.3895313892515355e+38, tiny = 1.1754943508222875e-38;
    if (t == DType::Float32) max = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::min();
    if (t == DType::Float64) max = std::numeric_limits<double>::max(), tiny = std::numeric_limits<double>::min();
    pool = {std::nan(""), inf, -inf, 0.0, -0.0, max, -max, tiny, -tiny, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 100.0};
  } else if (t == DType::Bool) {
    pool = {1, 0};
  } else {
    double min = -9.223372036854775808e18, max = 9.223372036854775807e18;
    if (t == DType::UInt8) min = 0, max = 255;
    if (t == DType::Int8) min = -128, max = 127;
    if (t == DType::Int16) min = -32768, max = 32767;
    if (t == DType::Int32) min = -2147483648.0, max = 2147483647.0;
    pool = {min, max, 0, 1, t == DType::UInt8 ? 2.0 : -1.0, 7, min + 1, max - 1};
  }
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = pool[static_cast<size_t>(i) % pool.size()];
  if (t == DType::Int64) {  // doubles cannot hold the int64 extremes exactly
    std::vector<int64_t> w(v.size());
    const int64_t ipool[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 0, 1, -1, 7,
                             std::numeric_limits<int64_t>::min() + 1, std::numeric_limits<int64_t>::max() - 1};
    for (size_t i = 0; i < w.size(); ++i) w[i] = ipool[i % 8];
    return from_vector(w, {n});
  }
  return from_vector(v, {n}).to(t);
}

Tensor SampleContext::indices(std::vector<int64_t> shape, int64_t bound) const {
  return tensor(std::move(shape), 0, static_cast<double>(std::max<int64_t>(bound, 1)), DType::Int64);
}

Tensor SampleContext::mask(std::vector<int64_t> shape, double density) const {
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + ++counter_);
  std::bernoulli_distribution d(density);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (double& x : v) x = d(rng) ? 1 : 0;
  return from_vector(v, shape).to(DType::Bool);
}

Tensor SampleContext::distinct(std::vector<int64_t> shape) const {
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + ++counter_);
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  std::shuffle(v.begin(), v.end(), rng);
  const bool is_signed = dtype_ != DType::UInt8 && dtype_ != DType::Bool;
  if (is_signed)
    for (double& x : v) x -= static_cast<double>(v.size() / 2);
  return from_vector(v, shape).to(dtype_);
}

Tensor SampleContext::distinct_indices(std::vector<int64_t> shape, int64_t dim, int64_t bound) const {
  if (shape.empty()) return indices({}, bound);  // 0-d: one index, distinct trivially
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (dim < 0) dim += nd;
  if (dim < 0 || dim >= nd || shape[static_cast<size_t>(dim)] > bound)
    throw std::invalid_argument("distinct_indices: dim out of range or shape[dim] > bound");
  std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + ++counter_);
  // Row-major: a slice along `dim` is `len` elements `inner` apart.
  const int64_t len = shape[static_cast<size_t>(dim)];
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < nd; ++d) inner *= shape[static_cast<size_t>(d)];
  const int64_t outer = len == 0 || inner == 0 ? 0 : numel_of(shape) / (len * inner);
  std::vector<int64_t> v(static_cast<size_t>(numel_of(shape)));
  std::vector<int64_t> perm(static_cast<size_t>(bound));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < bound; ++k) perm[static_cast<size_t>(k)] = k;
      std::shuffle(perm.begin(), perm.end(), rng);
      for (int64_t k = 0; k < len; ++k) v[static_cast<size_t>((o * len + k) * inner + i)] = perm[static_cast<size_t>(k)];
    }
  return from_vector(v, shape);
}

namespace {
std::map<std::string, OpSamples>& registry() {
  static std::map<std::string, OpSamples> r;
  return r;
}
}  // namespace

bool register_op_samples(const std::string& op, OpSamples samples, const char* file, int line) {
  samples.where = std::string(file) + ":" + std::to_string(line);
  auto [it, inserted] = registry().emplace(op, std::move(samples));
  if (!inserted)
    throw std::logic_error("op samples for '" + op + "' registered twice: " + it->second.where + " and " + file +
                           ":" + std::to_string(line));
  return true;
}

const std::map<std::string, OpSamples>& op_samples() { return registry(); }

const OpSamples* find_op_samples(const std::string& op) {
  auto it = registry().find(op);
  return it == registry().end() ? nullptr : &it->second;
}

}  // namespace loom::opinfo
