// loom/opinfo.h — what the tests know about every op of the catalog, in one
// registry (PyTorch's OpInfo): sample inputs, and how its gradient is checked.
//
// Each op family registers, next to nothing but its op names, generators of
// sample calls: the arguments of one call of the op, in schema order, for a
// given dtype. One registration feeds
//   - the core's own tests (op_samples_test.cpp runs every sample on the CPU
//     plugin and checks that layouts, in-place and out= forms agree),
//   - loom-conformance, which runs them on a device and compares with the CPU
//     plugin, and with --grad compares their backward too,
//   - gradcheck: the samples marked `gradcheck` (small, at points where the
//     op is differentiable) run in float64 under gradcheck and gradgradcheck
//     (autograd_catalog_test.cpp), so an op whose samples say so needs no
//     gradient cases of its own.
//
//   LOOM_OP_SAMPLES("add.Tensor", {
//       .dtypes = kAllDTypes,
//       .make = [](const SampleContext& ctx) {
//         return std::vector<Sample>{
//             ctx.call("broadcast", {ctx.tensor({2, 3}), ctx.tensor({3})}, {Value(1.0)}).for_gradcheck(),
//             ...};
//       }});
//
// What a sample cannot say — a gradient through a chain of ops, at chosen
// points away from kinks, with some inputs held constant — is a GradCase,
// registered for the op with LOOM_GRAD_CASES (below); gradcheck runs both.
//
// A Sample mirrors an OpCall: `tensors` are the Tensor / Tensor? / Tensor[]
// arguments in schema order (Tensor[] flattened in place, its count in the
// matching TENSOR_LIST value), `values` every other argument in schema order;
// values left off the end take the schema's defaults, and so do trailing
// Tensor? arguments left off (None). Tensors are on the CPU;
// the runner moves them to the device under test and lays them out
// (contiguous, permuted, offset) itself.
//
// The library depends on the core only: a program that runs samples loads
// the CPU plugin itself (linking the frontend, loom::loom, does).
#pragma once

#include <loom/autograd.h>
#include <loom/op_registry.h>
#include <loom/ops.h>
#include <loom/tensor.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace loom::opinfo {

// One non-tensor argument, owning what the LoomValue it becomes borrows.
//   monostate: None;  TensorCount: the length of a Tensor[] argument.
struct TensorCount {
  int64_t n = 0;
  bool operator==(const TensorCount&) const = default;
};
using Value = std::variant<std::monostate, bool, int64_t, double, std::vector<int64_t>, std::vector<double>,
                           std::string, DType, TensorCount>;

// How a result is compared with the CPU reference.
enum class Compare {
  Close,        // assert_close tolerances for the dtype; exact for integer and bool results
  Exact,        // bit-exact (copies, indexing, shape ops, sort indices ...)
  Statistical,  // random ops: shape, dtype and distribution (mean / range), not values
  ShapeOnly,    // results defined only up to ties or order (e.g. nonzero of ties); shape and dtype
};

struct Sample {
  std::string label;                           // "broadcast", "0-d", "empty", "dim=-1", "nan"...
  std::vector<std::optional<Tensor>> tensors;  // CPU tensors; nullopt = an absent Tensor?
  std::vector<Value> values;
  // Where the op allows a larger error than its dtype's default (long
  // reductions, matmul): absolute and relative tolerance for float32, scaled
  // for half types by the runner. 0 = the default.
  double atol = 0, rtol = 0;
  // Inputs that must not be laid out non-contiguously by the runner
  // (indices of `tensors`), e.g. an index tensor whose layout is the point.
  std::vector<size_t> keep_layout;
  // Whether gradcheck runs this sample (in float64, its floating inputs
  // differentiated, once as laid out and once strided): set it on small
  // samples (tens of elements) whose points lie away from the op's kinks,
  // jumps, ties and poles. Edge values and large samples stay unmarked;
  // loom-conformance --grad runs every sample either way.
  bool gradcheck = false;

  Sample&& for_gradcheck() && {
    gradcheck = true;
    return std::move(*this);
  }
};

// Deterministic inputs for one (op, dtype): the generator draws from a
// Philox stream seeded by `seed`, so a case ID reproduces its inputs.
class SampleContext {
 public:
  SampleContext(DType dtype, uint64_t seed);
  DType dtype() const { return dtype_; }
  uint64_t seed() const { return seed_; }

  // A CPU tensor of the sample's dtype (or `dtype`): uniform in [lo, hi) for
  // floating types, integers in [lo, hi) for integer types, random bits for
  // bool.
  Tensor tensor(std::vector<int64_t> shape, double lo = -3, double hi = 3,
                std::optional<DType> dtype = std::nullopt) const;
  // Floating: the edge values NaN, +-Inf, +-0, the dtype's max and lowest,
  // tiny and denormal numbers and ordinary ones, `n` of them, cycled;
  // integer: min, max, 0, -1, 1 ... ; bool: alternating.
  Tensor edge_values(int64_t n, std::optional<DType> dtype = std::nullopt) const;
  // int64 indices in [0, bound).
  Tensor indices(std::vector<int64_t> shape, int64_t bound) const;
  // A bool mask, about `density` true.
  Tensor mask(std::vector<int64_t> shape, double density = 0.5) const;
  // Pairwise distinct values of the sample's dtype (a shuffled 0..n-1,
  // shifted to straddle 0 for signed dtypes), for ops whose indices are
  // undefined on ties (sort, topk, max.dim, max_pool2d_with_indices). Exact
  // in every dtype while numel <= 256; bool holds no more than 2.
  Tensor distinct(std::vector<int64_t> shape) const;
  // int64 indices in [0, bound), distinct along `dim` (each slice a random
  // partial permutation; needs shape[dim] <= bound), for scatter, whose
  // result is undefined where two indices collide.
  Tensor distinct_indices(std::vector<int64_t> shape, int64_t dim, int64_t bound) const;

  // Shorthand for building a Sample.
  Sample call(std::string label, std::vector<std::optional<Tensor>> tensors, std::vector<Value> values = {}) const {
    return Sample{std::move(label), std::move(tensors), std::move(values), 0, 0, {}, false};
  }

 private:
  DType dtype_;
  uint64_t seed_;
  mutable uint64_t counter_ = 0;  // each tensor() draws a fresh stream
};

// Bit masks of dtypes (LOOM_DTYPE_BIT(LOOM_DTYPE_*)).
uint64_t dtype_bit(DType t);
extern const uint64_t kFloatDTypes;     // float16, bfloat16, float32, float64
extern const uint64_t kIntegerDTypes;   // uint8, int8, int16, int32, int64
extern const uint64_t kAllDTypes;       // float, integer and bool

struct OpSamples {
  // The dtypes worth trying; a dtype the CPU plugin rejects for a sample is
  // reported UNSUPPORTED rather than failing.
  uint64_t dtypes = kFloatDTypes;
  Compare compare = Compare::Close;
  // Whether the CPU reference may run in float64 and be cast back (false for
  // ops whose result depends on the dtype's rounding: floor_divide of
  // float16, casts, bit ops ...).
  bool reference_in_double = true;
  // Results are sums over many terms computed in the dtype itself (matmul,
  // conv, attention, scatter_add ...): a device rounds every partial sum,
  // the float64 reference only once, so for float16 / bfloat16 the absolute
  // tolerance widens to 1e-3 / 1e-2 (PyTorch's tests override these ops'
  // tolerances the same way).
  bool accumulates = false;
  // Whether gradcheck's runs of the samples marked `gradcheck` include
  // gradgradcheck (false: say why at the registration).
  bool gradgradcheck = true;
  std::function<std::vector<Sample>(const SampleContext&)> make;
  std::string where;  // file:line of the registration
};

// Registers the samples of catalog op `op` (its full name, "max.dim").
// Throws on a second registration of the same op.
bool register_op_samples(const std::string& op, OpSamples samples, const char* file, int line);
// Every registration, by op name.
const std::map<std::string, OpSamples>& op_samples();
// The samples of one op, or nullptr.
const OpSamples* find_op_samples(const std::string& op);

// The functional op whose samples an in-place or out= op is tested with:
// "add_" -> "add", "scatter_.src" -> "scatter.src", "add.out" -> "add";
// any other name is returned unchanged. Whether that op exists is the
// caller's question (fill_ has no "fill").
std::string functional_form(const std::string& op);

// Catalog ops that deliberately have no samples, each with the reason
// (e.g. an op only the autograd engine calls). The coverage test requires
// every other catalog op to have samples.
const std::map<std::string, std::string>& ops_without_samples();

}  // namespace loom::opinfo

#define LOOM_OP_SAMPLES_CONCAT2(a, b) a##b
#define LOOM_OP_SAMPLES_CONCAT(a, b) LOOM_OP_SAMPLES_CONCAT2(a, b)
#define LOOM_OP_SAMPLES(op, ...)                                                          \
  [[maybe_unused]] static const bool LOOM_OP_SAMPLES_CONCAT(loom_op_samples_, __LINE__) = \
      ::loom::opinfo::register_op_samples(op, ::loom::opinfo::OpSamples __VA_ARGS__, __FILE__, __LINE__);

namespace loom::opinfo {

// How run_sample calls the op.
struct RunOptions {
  // The tensor arguments to use instead of sample.tensors (the same
  // arguments moved to a device or laid out differently); nullptr: the
  // sample's own.
  const std::vector<std::optional<Tensor>>* tensors = nullptr;
  // out= tensors, one per result (empty: results are allocated).
  std::vector<Tensor*> out;
};

// Runs `sample` as one call of `op` through the dispatcher (autograd
// included): the sample's values become LoomValues, absent trailing values
// take the schema's defaults. Returns the results (for an in-place op, the
// mutated argument). Throws loom::Error as the op does, or naming the
// sample when it does not fit the schema (too many values, a value of the
// wrong kind, a required tensor left off; an int for a `float` argument is
// converted, as the Python binding does). Ops that write their arguments
// (fill_, copy_, uniform_, batch_norm in training) write the tensors given:
// pass copies through RunOptions::tensors to run a sample twice alike.
std::vector<Tensor> run_sample(const OpDef& op, const Sample& sample, const RunOptions& options = {});

}  // namespace loom::opinfo

// ---- gradient checks ---------------------------------------------------------------------
//
//   LOOM_GRAD_CASES("mul", [] {
//     return std::vector<GradCase>{
//         {"chain", {arg({2, 3}), arg({3})}, [](const Args& x) { return out(x[0] * x[1] * x[0]); }}};
//   })
namespace loom::opinfo {

using Args = std::vector<Tensor>;

// One gradcheck: float64 inputs (those to check require grad) and a function
// of them that calls the op.
struct GradCase {
  std::string label;                 // what the case exercises: "broadcast", "0-d", ...
  Args inputs;                       // float64; those to check require grad
  autograd::GradcheckFn fn;          // calls the op on the inputs
  bool check_double = true;          // also gradgradcheck (false: say why at the case)
  autograd::GradcheckOptions options{};
};

using CaseMaker = std::function<std::vector<GradCase>()>;

// Registers hand-written cases of catalog op `op` (its full name: "max.dim").
// Throws on a second registration of the same op.
bool register_grad_cases(const std::string& op, CaseMaker make, const char* file, int line);
// Every op with hand-written cases.
const std::map<std::string, CaseMaker>& grad_cases();

// Every gradcheck of `op`: its samples marked `gradcheck` (float64; each
// floating input differentiated, the rest held; as laid out, and strided
// where an input has 2 or more dims) followed by its hand-written cases.
// Empty when the op has neither.
std::vector<GradCase> gradient_checks(const OpDef& op);

// A float64 leaf that requires grad, uniform in [lo, hi) (seeded per call).
Tensor arg(std::vector<int64_t> shape, double lo = -1, double hi = 1);
// The same values laid out non-contiguously (a transposed buffer), still a
// leaf that requires grad. Needs at least 2 dims.
Tensor strided_arg(std::vector<int64_t> shape, double lo = -1, double hi = 1);
// A float64 tensor that does not require grad (indices, masks, targets).
Tensor constant(std::vector<int64_t> shape, double lo = -1, double hi = 1);
// A float64 leaf that requires grad holding exactly `values`: points chosen
// away from (or exactly on) kinks, ties, zeros and jumps.
Tensor leaf(const std::vector<double>& values, std::vector<int64_t> shape);
// Index tensors (int64 / int32) and bool masks holding exactly `values`.
Tensor ints(const std::vector<int64_t>& values, std::vector<int64_t> shape);
Tensor ints32(const std::vector<int32_t>& values, std::vector<int64_t> shape);
Tensor mask(const std::vector<bool>& values, std::vector<int64_t> shape);
// One output as a function result.
inline std::vector<Tensor> out(Tensor t) { return {std::move(t)}; }

}  // namespace loom::opinfo

#define LOOM_GRAD_CASES_CONCAT2(a, b) a##b
#define LOOM_GRAD_CASES_CONCAT(a, b) LOOM_GRAD_CASES_CONCAT2(a, b)
#define LOOM_GRAD_CASES(op, ...)                                                          \
  [[maybe_unused]] static const bool LOOM_GRAD_CASES_CONCAT(loom_grad_cases_, __LINE__) = \
      ::loom::opinfo::register_grad_cases(op, __VA_ARGS__, __FILE__, __LINE__);
