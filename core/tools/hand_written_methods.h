// hand_written_methods.h — the Tensor methods loom/tensor.h declares by
// hand, read from the header itself so the generator never needs a second
// list kept in step with it.
#pragma once

#include "signature.h"

#include <map>
#include <string>
#include <vector>

namespace loom::tools {

// Method name -> its hand-written overloads.
using MethodSet = std::map<std::string, std::vector<Signature>>;

// The methods declared in the body of `class Tensor` in `header_text`
// (loom/tensor.h), without the generated ones (the #include of the generated
// declarations is a preprocessor line, which the scan skips). Methods the
// class declares by expanding an X-macro table of loom/plugin/op_tables.h
// (LOOM_UNARY_OPS(...), ...) are added row by row. Throws std::runtime_error
// when the class is not found or expands a table this scan does not know,
// so a new kind of declaration fails the generator instead of being missed.
MethodSet scan_hand_written_methods(const std::string& header_text);

}  // namespace loom::tools
