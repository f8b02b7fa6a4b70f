// signature.cpp — see signature.h.
#include "signature.h"

#include <algorithm>
#include <cctype>

namespace loom::tools {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_tensor_handle(const std::string& type) {
  return type == "const Tensor&" || type == "Tensor" || type == "Tensor&" ||
         type == "const std::optional<Tensor>&" || type == "std::optional<Tensor>";
}

}  // namespace

std::string normalise_type(const std::string& type) {
  std::string out;
  bool pending_space = false;
  for (char c : type) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      pending_space = !out.empty();
      continue;
    }
    // A space survives only between two words ("const Tensor", "unsigned long").
    if (pending_space && is_word_char(out.back()) && is_word_char(c)) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

bool may_be_ambiguous(const Signature& a, const Signature& b) {
  // A call with k arguments can reach both when k is in both ranges and no
  // position pairs a Tensor handle with a non-Tensor.
  const size_t lo = std::max(a.required, b.required);
  const size_t hi = std::min(a.types.size(), b.types.size());
  for (size_t k = lo; k <= hi; ++k) {
    bool all_overlap = true;
    for (size_t i = 0; i < k && all_overlap; ++i)
      all_overlap = is_tensor_handle(a.types[i]) == is_tensor_handle(b.types[i]);
    if (all_overlap) return true;
  }
  return false;
}

}  // namespace loom::tools
