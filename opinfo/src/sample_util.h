// sample_util.h (samples-internal) — shorthand the family files share: typed
// Value makers (a bare literal would pick the wrong variant member) and the
// shape sets every elementwise op is tried on.
#pragma once

#include <loom/opinfo.h>

#include <string>
#include <utility>
#include <vector>

namespace loom::opinfo::detail {

using Samples = std::vector<Sample>;
using Shape = std::vector<int64_t>;

inline Value I(int64_t v) { return Value(v); }
inline Value F(double v) { return Value(v); }
inline Value B(bool v) { return Value(v); }
inline Value L(std::vector<int64_t> v) { return Value(std::move(v)); }
inline Value S(std::string v) { return Value(std::move(v)); }
inline Value D(DType t) { return Value(t); }
inline Value None() { return Value(std::monostate{}); }

inline bool is_float(const SampleContext& c) { return is_floating_point(c.dtype()); }
inline bool is_signed(DType t) { return t != DType::UInt8 && t != DType::Bool; }

// Numel above which the CPU kernels take their parallel path.
inline constexpr int64_t kLarge = 40000;

// A unary elementwise op on `c.tensor(shape, lo, hi)` for the usual shapes —
// 2-d, 0-d, size-1 dims, empty, one large (parallel path) — plus the dtype's
// edge values, each with `values`. (Layouts are the runner's job.) The small
// non-empty ones are marked for gradcheck: [lo, hi) must then be a range
// where the op is differentiable (for a piecewise op, random points land on
// a kink with probability 0).
Samples unary_samples(const SampleContext& c, double lo, double hi, const std::vector<Value>& values = {});

// A binary elementwise op: same shapes, broadcasting (size-1 dims against
// larger, 0-d against n-d), empty, large, and edge values against edge
// values. `other` is drawn from [olo, ohi). Marked for gradcheck as above.
Samples binary_samples(const SampleContext& c, double lo, double hi, double olo, double ohi,
                       const std::vector<Value>& values = {});

}  // namespace loom::opinfo::detail
