// loom/ops.h — the op catalog as C++ functions.
//
// Each function fills an OpCall and dispatches it (loom/op_call.h); the op's
// schema, shape/dtype rule and (later) derivative sit together in
// core/src/ops/ops_*.cpp.
#pragma once

#include <loom/generator.h>
#include <loom/plugin/op_tables.h>
#include <loom/tensor.h>
#include <loom/tensor_options.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

namespace loom {

// ---- creation ----------------------------------------------------------------
Tensor empty(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor zeros(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor ones(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device());
Tensor full(IntArrayRef sizes, Scalar value, std::optional<DType> dtype = std::nullopt,
            Device device = cpu_device());
// [start, end) with step; dtype int64 when all are integers, else float32.
Tensor arange(Scalar end, std::optional<DType> dtype = std::nullopt, Device device = cpu_device());
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = std::nullopt,
              Device device = cpu_device());
// The random factories draw from `generator`, else from the default
// generator of `device` (loom/generator.h).
Tensor rand(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device(),
            const std::optional<Generator>& generator = std::nullopt);
// Integers uniform in [low, high).
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, DType dtype = DType::Int64,
               Device device = cpu_device(), const std::optional<Generator>& generator = std::nullopt);
// num_samples category indices per row of `probs` ([C] or [N, C], any
// non-negative weights), drawn with or without replacement
// (torch.multinomial); int64 [num_samples] or [N, num_samples].
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   const std::optional<Generator>& generator = std::nullopt);
// A random permutation of 0 .. n-1 (torch.randperm).
Tensor randperm(int64_t n, DType dtype = DType::Int64, Device device = cpu_device(),
                const std::optional<Generator>& generator = std::nullopt);
// `steps` points from start to end inclusive (torch.linspace).
Tensor linspace(Scalar start, Scalar end, int64_t steps, DType dtype = DType::Float32,
                Device device = cpu_device());
// Ones on the diagonal of an n x m matrix (m = n when negative).
Tensor eye(int64_t n, int64_t m = -1, DType dtype = DType::Float32, Device device = cpu_device());
Tensor randn(IntArrayRef sizes, DType dtype = DType::Float32, Device device = cpu_device(),
             const std::optional<Generator>& generator = std::nullopt);
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);

// ---- creation with TensorOptions (libtorch's forms) -------------------------------
//   zeros({2, 3}, dtype(kDouble).device(kCUDA));  ones(4, requires_grad());
//   empty(n, device);  arange(10, kLong);  randint(0, 10, {5});
// A bare int is a one-dim size. Where an overload above takes an optional
// dtype, the TensorOptions form is a template that takes everything but a
// DType (which the form above takes), so neither call is ambiguous.
template <class T>
concept OptionsNotDType = std::is_convertible_v<T, TensorOptions> && !std::is_same_v<std::decay_t<T>, DType>;

Tensor empty(IntArrayRef sizes, const TensorOptions& options);
Tensor zeros(IntArrayRef sizes, const TensorOptions& options);
Tensor ones(IntArrayRef sizes, const TensorOptions& options);
Tensor rand(IntArrayRef sizes, const TensorOptions& options);
Tensor randn(IntArrayRef sizes, const TensorOptions& options);
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& options);
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options = {});
Tensor randperm(int64_t n, const TensorOptions& options);
Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& options);
Tensor eye(int64_t n, const TensorOptions& options);
Tensor eye(int64_t n, int64_t m, const TensorOptions& options);
Tensor full_with_options(IntArrayRef sizes, Scalar value, const TensorOptions& options);
template <OptionsNotDType O>
Tensor full(IntArrayRef sizes, Scalar value, const O& options) {
  return full_with_options(sizes, value, options);
}
Tensor arange_with_options(Scalar start, Scalar end, Scalar step, const TensorOptions& options);
template <OptionsNotDType O>
Tensor arange(Scalar end, const O& options) {
  return arange_with_options(0, end, 1, options);
}
template <OptionsNotDType O>
Tensor arange(Scalar start, Scalar end, const O& options) {
  return arange_with_options(start, end, 1, options);
}
template <OptionsNotDType O>
Tensor arange(Scalar start, Scalar end, Scalar step, const O& options) {
  return arange_with_options(start, end, step, options);
}
// Like t, with options' fields replacing t's.
Tensor empty_like(const Tensor& t, const TensorOptions& options);
Tensor zeros_like(const Tensor& t, const TensorOptions& options);
Tensor ones_like(const Tensor& t, const TensorOptions& options);
Tensor rand_like(const Tensor& t, const TensorOptions& options = {});
Tensor randn_like(const Tensor& t, const TensorOptions& options = {});
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options = {});

// A tensor over memory the caller owns and keeps alive (torch::from_blob):
// no copy; row-major unless strides are given. CPU memory unless options
// name a host device.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});

// torch::tensor: a copy of the values, nested braces for more dims.
// Integers become int64, floating values the default float (float32), bools
// bool, unless options give a dtype.
namespace detail {
template <class T>
constexpr DType natural_dtype() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else if constexpr (std::is_integral_v<T>) return DType::Int64;
  else return kDefaultFloat;
}
Tensor tensor_from_doubles(std::vector<double> values, IntArrayRef sizes, DType natural, const TensorOptions& options);
Tensor tensor_from_int64s(std::vector<int64_t> values, IntArrayRef sizes, DType natural, const TensorOptions& options);
// Integers (and bools) exactly, floating values as doubles.
template <class T, class It>
Tensor tensor_of(It begin, It end, IntArrayRef sizes, const TensorOptions& options) {
  if constexpr (std::is_integral_v<T>)
    return tensor_from_int64s(std::vector<int64_t>(begin, end), sizes, natural_dtype<T>(), options);
  else
    return tensor_from_doubles(std::vector<double>(begin, end), sizes, natural_dtype<T>(), options);
}
}  // namespace detail
template <class T>
  requires std::is_arithmetic_v<T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& options = {}) {
  return detail::tensor_of<T>(values.begin(), values.end(), {static_cast<int64_t>(values.size())}, options);
}
template <class T>
  requires std::is_arithmetic_v<T>
Tensor tensor(std::initializer_list<std::initializer_list<T>> rows, const TensorOptions& options = {}) {
  std::vector<T> v;
  const int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
  for (const auto& r : rows) {
    LOOM_CHECK(static_cast<int64_t>(r.size()) == cols, "tensor: rows of ", cols, " and ", r.size(),
               " values (ragged nested lists are not a tensor)");
    v.insert(v.end(), r.begin(), r.end());
  }
  return detail::tensor_of<T>(v.begin(), v.end(), {static_cast<int64_t>(rows.size()), cols}, options);
}
template <class T>
  requires std::is_arithmetic_v<T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  return detail::tensor_of<T>(values.begin(), values.end(), {static_cast<int64_t>(values.size())}, options);
}
template <class T>
  requires std::is_arithmetic_v<T>
Tensor tensor(T value, const TensorOptions& options = {}) {
  const T one[1] = {value};
  return detail::tensor_of<T>(one, one + 1, {}, options);
}
// A 0-d tensor holding `value` on `device`, marked as a wrapped number so it
// takes part in type promotion like a Python number.
Tensor scalar_tensor(Scalar value, Device device);

// ---- elementwise -----------------------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division
// rounding_mode: nullopt (true division), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, const std::optional<std::string>& rounding_mode);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor exp(const Tensor& a);

#define LOOM_DECLARE_UNARY(op, ...) Tensor op(const Tensor& a);
LOOM_UNARY_OPS(LOOM_DECLARE_UNARY)
LOOM_PREDICATE_OPS(LOOM_DECLARE_UNARY)
#undef LOOM_DECLARE_UNARY
Tensor round(const Tensor& a, int64_t decimals = 0);  // half to even
Tensor gelu(const Tensor& a, const std::string& approximate = "none");  // or "tanh"
Tensor softplus(const Tensor& a, Scalar beta = 1, Scalar threshold = 20);
Tensor elu(const Tensor& a, Scalar alpha = 1, Scalar scale = 1, Scalar input_scale = 1);
Tensor leaky_relu(const Tensor& a, Scalar negative_slope = 0.01);
// clamp(a, min_val, max_val) in a's dtype, with PyTorch's gradient: 0 at
// the bounds too (clamp's passes there). relu6 is hardtanh(a, 0, 6).
Tensor hardtanh(const Tensor& a, Scalar min_val = -1, Scalar max_val = 1);
Tensor& hardtanh_(Tensor& a, Scalar min_val = -1, Scalar max_val = 1);
// None: 0, the dtype's largest, the dtype's lowest.
Tensor nan_to_num(const Tensor& a, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);

#define LOOM_DECLARE_BINARY(op, ...)              \
  Tensor op(const Tensor& a, const Tensor& b);    \
  Tensor op(const Tensor& a, Scalar b);
LOOM_BINARY_OPS(LOOM_DECLARE_BINARY)
#undef LOOM_DECLARE_BINARY
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, Scalar b);
Tensor where(const Tensor& condition, Scalar a, const Tensor& b);
Tensor lerp(const Tensor& a, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& a, const Tensor& end, Scalar weight);

// ---- reductions --------------------------------------------------------------------
Tensor sum(const Tensor& a, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& a, IntArrayRef dim, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
// dim: nullopt (or empty) reduces every dimension.
Tensor mean(const Tensor& a, std::optional<IntArrayRef> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& a, std::optional<IntArrayRef> dim = std::nullopt, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& a, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& a, IntArrayRef dim = {}, bool keepdim = false);
Tensor max(const Tensor& a);  // of every element
Tensor min(const Tensor& a);
// (values, indices) along `dim`; indices of the first occurrence.
std::pair<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);
std::pair<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim = false);
// Without dim: the index into the flattened tensor.
Tensor argmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// correction: nullopt means 1 (Bessel's correction), as PyTorch.
Tensor var(const Tensor& a, std::optional<IntArrayRef> dim = std::nullopt,
           std::optional<Scalar> correction = std::nullopt, bool keepdim = false);
Tensor std(const Tensor& a, std::optional<IntArrayRef> dim = std::nullopt,
           std::optional<Scalar> correction = std::nullopt, bool keepdim = false);
// p: nullopt means 2; infinity and -infinity allowed.
Tensor norm(const Tensor& a, std::optional<Scalar> p = std::nullopt,
            std::optional<IntArrayRef> dim = std::nullopt, bool keepdim = false);
Tensor logsumexp(const Tensor& a, IntArrayRef dim, bool keepdim = false);
Tensor all(const Tensor& a, std::optional<IntArrayRef> dim = std::nullopt, bool keepdim = false);
Tensor any(const Tensor& a, std::optional<IntArrayRef> dim = std::nullopt, bool keepdim = false);
Tensor cumsum(const Tensor& a, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& a, int64_t dim, std::optional<DType> dtype = std::nullopt);

// ---- linear algebra ------------------------------------------------------------------
// torch.matmul: 1-D and 2-D operands, and batched N-D with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
// The fixed-rank products take one dtype (no promotion), as PyTorch's do.
Tensor mm(const Tensor& mat1, const Tensor& mat2);        // [n, k] x [k, m]
Tensor bmm(const Tensor& batch1, const Tensor& batch2);   // [b, n, k] x [b, k, m]
Tensor dot(const Tensor& a, const Tensor& b);             // 1-D . 1-D -> 0-d
Tensor outer(const Tensor& a, const Tensor& b);           // [n] x [m] -> [n, m]; promotes
// beta * self + alpha * (mat1 @ mat2); self broadcasts to the product. With
// beta == 0 self is ignored (its NaNs do not propagate).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
             Scalar alpha = 1);
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, Scalar beta = 1,
               Scalar alpha = 1);
// input @ weight.T + bias (torch.nn.functional.linear): input [*, in],
// weight [out, in] (or [in]), bias broadcastable to [*, out].
Tensor linear(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);

// ---- out= variants -------------------------------------------------------------------
// `op_out(out, args...)` is torch.op(args..., out=out): `out` is resized to
// the result's shape (its old contents and layout discarded when the shape
// differs), must be on the inputs' device, and its dtype must be able to hold
// the result (torch.can_cast); the result is cast into it. Returns `out`.
#define LOOM_DECLARE_UNARY_OUT(op, ...) Tensor& op##_out(Tensor& out, const Tensor& a);
LOOM_UNARY_OPS(LOOM_DECLARE_UNARY_OUT)
LOOM_PREDICATE_OPS(LOOM_DECLARE_UNARY_OUT)
#undef LOOM_DECLARE_UNARY_OUT
#define LOOM_DECLARE_BINARY_OUT(op, ...) \
  Tensor& op##_out(Tensor& out, const Tensor& a, const Tensor& b);
LOOM_BINARY_OPS(LOOM_DECLARE_BINARY_OUT)
#undef LOOM_DECLARE_BINARY_OUT
Tensor& neg_out(Tensor& out, const Tensor& a);
Tensor& relu_out(Tensor& out, const Tensor& a);
Tensor& exp_out(Tensor& out, const Tensor& a);
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b,
                const std::optional<std::string>& rounding_mode = std::nullopt);
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor& sum_out(Tensor& out, const Tensor& a, IntArrayRef dim, bool keepdim = false,
                std::optional<DType> dtype = std::nullopt);
Tensor& mean_out(Tensor& out, const Tensor& a, IntArrayRef dim, bool keepdim = false,
                 std::optional<DType> dtype = std::nullopt);
Tensor& cumsum_out(Tensor& out, const Tensor& a, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& mm_out(Tensor& out, const Tensor& mat1, const Tensor& mat2);
Tensor& bmm_out(Tensor& out, const Tensor& batch1, const Tensor& batch2);
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  Scalar beta = 1, Scalar alpha = 1);

// ---- operators -------------------------------------------------------------------------
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator!(const Tensor& a);  // logical_not

// Optimizer updates (not differentiable), see core/src/ops/ops_optim.cpp:
// self -= step_size * exp_avg / (sqrt(exp_avg_sq) + eps), in one pass.
Tensor& adam_update_(Tensor& self, const Tensor& exp_avg, const Tensor& exp_avg_sq, double step_size, double eps);
// One whole Adam/AdamW step of a parameter (op _adam_step_): self *= decay;
// exp_avg and exp_avg_sq updated in place by lerp with 1 - beta1 / 1 - beta2
// (grad, grad^2); then the _adam_update_ above.
Tensor& adam_step_(Tensor& self, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq, double decay,
                   double beta1, double beta2, double step_size, double eps);
// One SGD-with-momentum step of a parameter after its first (op _sgd_step_):
// d = grad + weight_decay * self; momentum_buffer = momentum_buffer *
// momentum + (1 - dampening) * d, in place; self -= lr * (nesterov ?
// d + momentum * momentum_buffer : momentum_buffer).
Tensor& sgd_step_(Tensor& self, const Tensor& grad, const Tensor& momentum_buffer, double weight_decay,
                  double momentum, double dampening, bool nesterov, double lr);

}  // namespace loom

// The rest of the catalog, one header per family.
#include <loom/ops/conv.h>
#include <loom/ops/indexing.h>
#include <loom/ops/loss.h>
#include <loom/ops/nn.h>
#include <loom/ops/rnn.h>
#include <loom/ops/shape.h>
