// loom/op_samples.h — sample inputs for every op of the catalog.
//
// Each op family registers, next to nothing but its op names, generators of
// sample calls: the arguments of one call of the op, in schema order, for a
// given dtype. They are shared by the core's own tests (op_samples_test.cpp
// runs every sample on the CPU plugin and checks that layouts, in-place and
// out= forms agree) and by loom-conformance, which runs them on a device and
// compares with the CPU plugin.
//
//   LOOM_OP_SAMPLES("add.Tensor", {
//       .dtypes = kAllDTypes,
//       .make = [](const SampleContext& ctx) {
//         return std::vector<Sample>{
//             ctx.call("broadcast", {ctx.tensor({2, 3}), ctx.tensor({3})}, {Value(1.0)}),
//             ...};
//       }});
//
// A Sample mirrors an OpCall: `tensors` are the Tensor / Tensor? / Tensor[]
// arguments in schema order (Tensor[] flattened in place, its count in the
// matching TENSOR_LIST value), `values` every other argument in schema order;
// values left off the end take the schema's defaults, and so do trailing
// Tensor? arguments left off (None). Tensors are on the CPU;
// the runner moves them to the device under test and lays them out
// (contiguous, permuted, offset) itself.
#pragma once

#include <loom/loom.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace loom::samples {

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
    return Sample{std::move(label), std::move(tensors), std::move(values), 0, 0, {}};
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

}  // namespace loom::samples

#define LOOM_OP_SAMPLES_CONCAT2(a, b) a##b
#define LOOM_OP_SAMPLES_CONCAT(a, b) LOOM_OP_SAMPLES_CONCAT2(a, b)
#define LOOM_OP_SAMPLES(op, ...)                                                          \
  [[maybe_unused]] static const bool LOOM_OP_SAMPLES_CONCAT(loom_op_samples_, __LINE__) = \
      ::loom::samples::register_op_samples(op, ::loom::samples::OpSamples __VA_ARGS__, __FILE__, __LINE__);

namespace loom::samples {

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

}  // namespace loom::samples
