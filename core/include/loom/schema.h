// loom/schema.h — op schemas in PyTorch's notation, parsed once at def time.
//
//   "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
//   "sum(Tensor self, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
//   "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)"
//
// Argument types: Tensor, Tensor?, Tensor[], Scalar, int, float, bool, str,
// int[] / int[N], float[], ScalarType, Device, Generator, each optionally
// followed by '?'. `(a!)` marks an argument the op writes. Arguments after
// '*' are keyword-only.
#pragma once

#include <loom/plugin_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

enum class ArgType : uint8_t {
  Tensor, TensorList, Scalar, Int, IntList, Float, FloatList, Bool, Str, ScalarType, Device,
  Generator
};

std::string_view arg_type_name(ArgType t);

struct Argument {
  std::string name;
  ArgType type = ArgType::Tensor;
  bool optional = false;    // "T?"
  bool kwarg_only = false;  // after '*'
  bool mutated = false;     // "Tensor(a!)"
  std::string alias;        // "a" in Tensor(a!) / Tensor(a)
  int list_size = 0;        // N in int[N], 0 when unsized
  // Default as written ("1", "None", "[0, 1]"), and parsed into a value.
  std::optional<std::string> default_text;
  LoomValue default_value{};           // scalar kinds
  std::vector<int64_t> default_ints;   // IntList defaults
  std::vector<double> default_floats;  // FloatList defaults
  bool is_tensor() const { return type == ArgType::Tensor; }
};

struct Schema {
  std::string name;      // "add"
  std::string overload;  // "out" in "add.out", else ""
  std::vector<Argument> args;
  std::vector<Argument> returns;  // names may be empty
  std::string text;      // as given

  std::string full_name() const { return overload.empty() ? name : name + "." + overload; }
  int num_tensor_args() const;   // Tensor and Tensor? arguments
  bool is_inplace() const { return inplace; }  // any mutated argument
  bool inplace = false;          // set by parse_schema
};

// Parses a schema or throws loom::Error naming the schema, the position and
// what was expected.
Schema parse_schema(std::string_view text);

}  // namespace loom
