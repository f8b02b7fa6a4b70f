// signature.h — a C++ method's parameter list, as far as overload
// resolution cares, and the one question the generator asks of two of them:
// could a call match both?
#pragma once

#include <string>
#include <vector>

namespace loom::tools {

struct Signature {
  std::vector<std::string> types;  // normalised (see normalise_type)
  size_t required = 0;             // parameters without a default, the first ones
};

// "const std::optional<Tensor> &" -> "const std::optional<Tensor>&": one
// spelling per type, so types compare as strings.
std::string normalise_type(const std::string& type);

// Whether some call could match both `a` and `b` (so declaring both would
// make it ambiguous, or one would silently take the other's calls). Errs
// towards yes: the only types it tells apart are Tensor handles (const
// Tensor&, std::optional<Tensor>) from everything else, because no number,
// list or string converts to a Tensor (an empty `{}` aside) and a Tensor
// converts to none of them.
bool may_be_ambiguous(const Signature& a, const Signature& b);

}  // namespace loom::tools
