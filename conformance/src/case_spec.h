// case_spec.h — the cases of a run: which op, sample, dtype and form.
//
// A case ID is "op/sample-label/dtype/variant" (a '/' inside a label
// becomes '_'), stable across runs and machines as long as the op's samples
// do not change; the seed that generated the sample's inputs is derived
// from the op and dtype, so an ID reproduces its inputs.
#pragma once

#include <loom/dtype.h>

#include <cstdint>
#include <string>
#include <vector>

namespace loom::conformance {

enum class Variant {
  Contiguous,     // functional form, contiguous inputs
  NonContiguous,  // functional form, inputs permuted / offset on the device
  InPlace,        // the op's "name_" partner on a copy of the first input
  Out,            // the functional form writing into out= tensors
  Grad,           // --grad: backward of the functional form
};
const char* to_string(Variant v);  // "contiguous", "noncontiguous", "inplace", "out", "grad"

struct CaseSpec {
  std::string id;
  std::string op;            // catalog name
  std::string label;         // the sample's label
  size_t sample_index = 0;   // into the op's samples for (dtype, seed)
  DType dtype = DType::Float32;
  Variant variant = Variant::Contiguous;
  uint64_t seed = 0;
};

enum class Tier { Quick, Full };

struct CaseFilter {
  std::vector<std::string> ops;  // -o; empty: every op
  std::string case_glob;         // --case; empty: every case (glob: * and ?)
  Tier tier = Tier::Quick;
  bool grad = false;             // add Grad cases for differentiable ops
  // The device under test's slot: --quick adds every dtype its kernels for
  // an op (or the op's in-place / functional partner) registered, so a bug
  // in a dtype outside the quick set is not left to --full. -1: none.
  int device_slot = -1;
};

struct CasePlan {
  std::vector<CaseSpec> cases;
  std::vector<std::string> ops_without_samples;  // catalog ops selected but without samples
  std::vector<std::string> unknown_ops;          // -o names the catalog lacks
  // In-place ops selected by name that run as their functional form's
  // "inplace" cases: {"add_", "add"}.
  std::vector<std::pair<std::string, std::string>> inplace_of;
};

// The seed of every sample of (op, dtype): FNV-1a of "op/dtype".
uint64_t case_seed(const std::string& op, DType dtype);
std::string case_id(const std::string& op, const std::string& label, DType dtype, Variant v);
// Every case the filter selects, in catalog order then sample, dtype, variant.
// Deterministic: workers rebuild the same plan and run cases by index.
CasePlan plan_cases(const CaseFilter& filter);
// Shell-style glob: '*' any run, '?' one character.
bool glob_match(std::string_view pattern, std::string_view text);

}  // namespace loom::conformance
