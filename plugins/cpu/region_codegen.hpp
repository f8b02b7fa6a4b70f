// C++ for a fused elementwise region (plugin_api.h's LoomFusedRegion) on
// the CPU: one loop over the elements, each instruction a local variable
// computed by the functor the op's eager kernel uses (float_fns.hpp,
// loom/plugin/scalar_ops.hpp), so the compiled region gives the tile
// interpreter's bits while each element goes through registers once instead
// of one cache tile per op. region_compiler.cpp compiles the source with
// the host's C++ compiler; fused_region.cpp runs it.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>
#include <string>

namespace loom::cpu {

// The generated function. `in[k]` points at input k's first element of
// this range (a uniform input: its one value); `out[k]` at output k's. It
// computes elements [0, n).
using RegionFn = void (*)(int64_t n, const void* const* in, void* const* out);
inline constexpr const char* kRegionSymbol = "loom_region";

// The header every generated source includes (float_fns.hpp and what it
// includes are written beside it: region_compiler.cpp).
inline constexpr const char* kRegionPrelude = "float_fns.hpp";

struct RegionSource {
  std::string code;      // the translation unit, defining kRegionSymbol
  std::string declined;  // non-empty: why not generated (then `code` is empty)
};

// The source for `region` when the inputs whose bits are set in
// `uniform_inputs` are one value broadcast over the whole range (scalar
// constants: read once, before the loop). Declines, naming why, any dtype
// but float32 and float64 and any op without a functor here (the region
// then runs on the tile interpreter).
RegionSource generate_region(const LoomFusedRegion& region, uint64_t uniform_inputs);

}  // namespace loom::cpu
