// Entry points shared between the binary-op files and elementwise.cpp.
// What each kernel receives: docs/kernel_conventions.md, "Elementwise binary
// and ternary ops".
#pragma once

#include <loom/plugin.hpp>

namespace loom::cpu {

// div's rounding_mode (values[0]): NONE (or no value at all) is true
// division, STRING "trunc" or "floor" the rounding modes; anything else is
// INVALID_ARGUMENT.
enum class DivMode { True, Trunc, Floor };
DivMode div_mode(const LoomKernelCall& c);

// div with DivMode::Trunc or Floor (binary.cpp); integers and floats.
void div_rounded(const LoomKernelCall& c, DivMode mode);

}  // namespace loom::cpu
