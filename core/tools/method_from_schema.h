// method_from_schema.h — the C++ Tensor method for one op schema whose first
// argument is `self`: its declaration and its definition, which calls the
// op through the dispatcher.
//
// Types map as the hand-written API spells them: Tensor -> const Tensor&,
// Tensor? -> const std::optional<Tensor>&, int -> int64_t, int[] ->
// IntArrayRef, float -> double, Scalar -> Scalar, bool -> bool, str ->
// const std::string&, ScalarType -> DType, Device -> Device, Generator? ->
// const std::optional<Generator>&, each `T?` -> std::optional<T>. Returns:
// Tensor -> Tensor, Tensor(a!) of self -> Tensor& (*this), several ->
// std::tuple<Tensor, ...>, Tensor[] -> std::vector<Tensor>, none -> void.
// Schema defaults become C++ default arguments.
#pragma once

#include "signature.h"

#include <loom/schema.h>

#include <optional>
#include <string>
#include <vector>

namespace loom::tools {

struct Parameter {
  std::string type;           // as declared: "const Tensor&"
  std::string name;           // the schema's, made a valid C++ name
  std::string default_value;  // C++ text; empty for none
};

struct Method {
  std::string name;    // "lerp"
  std::string op;      // the catalog name to look up: "lerp", "scatter_.src"
  std::string schema;  // the schema's text, for the comment above it
  std::string returns;
  bool is_const = true;
  std::vector<Parameter> params;  // after self
  // >= 0: the number form, with this parameter (a Tensor in the schema) taken
  // as a Scalar and passed as a wrapped 0-d tensor on self's device.
  int number_param = -1;
  std::vector<std::string> body;  // statements, one a line

  Signature signature() const;
  std::string declaration() const;  // "Tensor lerp(const Tensor& end, ...) const;"
  std::string definition() const;   // "Tensor Tensor::lerp(...) const {\n...}\n"
};

// The method for `schema`, or, in `why_not`, the reason there is none (an
// argument or return type with no C++ mapping). The schema's first argument
// must be `self`. With `number_form`, its last Tensor argument becomes a
// Scalar (only asked for elementwise ops, whose tensor arguments broadcast).
std::optional<Method> method_from_schema(const Schema& schema, bool number_form, std::string& why_not);

}  // namespace loom::tools
