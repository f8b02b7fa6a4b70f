// case_generation.cpp — the plan of a run: cases from the catalog and the
// op samples (loom/opinfo.h), filtered by op, case glob and tier.
#include "case_spec.h"
#include "op_forms.h"

#include <loom/op_registry.h>
#include <loom/opinfo.h>
#include <loom/plugin/fnv1a.hpp>

#include <algorithm>

namespace loom::conformance {
namespace {

// --quick: the dtypes most backends implement first, one half type among
// them, plus whatever the device registered kernels for.
constexpr DType kQuickDTypes[] = {DType::Float32, DType::Int64, DType::Bool, DType::BFloat16};
constexpr size_t kQuickSamplesPerOp = 2;

// The dtypes the device's own kernels for `op` take: its kernel's mask, its
// in-place form's and its functional form's (a kernel serves both). A mask
// of 0 registers every dtype.
uint64_t registered_dtypes(const OpDef& op, int slot) {
  if (slot < 0) return 0;
  uint64_t mask = 0;
  auto add = [&](const OpDef* o) {
    if (const KernelEntry* k = o ? o->kernel(slot) : nullptr) mask |= k->dtypes ? k->dtypes : ~uint64_t{0};
  };
  add(&op);
  add(op.functional_form());
  add(inplace_partner(op));
  return mask;
}

std::vector<DType> dtypes_for(uint64_t mask, uint64_t registered, Tier tier) {
  std::vector<DType> out;
  for (int code = 0; code < kNumDTypes; ++code) {
    const DType t = static_cast<DType>(code);
    if (!((mask >> code) & 1u)) continue;
    const bool quick = std::find(std::begin(kQuickDTypes), std::end(kQuickDTypes), t) != std::end(kQuickDTypes);
    if (tier == Tier::Quick && !quick && !((registered >> code) & 1u)) continue;
    out.push_back(t);
  }
  // float16 stands in for bfloat16 when the op takes only the former.
  if (tier == Tier::Quick && !((mask >> static_cast<int>(DType::BFloat16)) & 1u) &&
      ((mask >> static_cast<int>(DType::Float16)) & 1u) &&
      std::find(out.begin(), out.end(), DType::Float16) == out.end())
    out.push_back(DType::Float16);
  return out;
}

bool layable(const opinfo::Sample& s) {
  for (size_t i = 0; i < s.tensors.size(); ++i) {
    if (std::find(s.keep_layout.begin(), s.keep_layout.end(), i) != s.keep_layout.end()) continue;
    if (s.tensors[i] && s.tensors[i]->numel() > 0) return true;
  }
  return false;
}

}  // namespace

const char* to_string(Variant v) {
  switch (v) {
    case Variant::Contiguous: return "contiguous";
    case Variant::NonContiguous: return "noncontiguous";
    case Variant::InPlace: return "inplace";
    case Variant::Out: return "out";
    case Variant::Grad: return "grad";
  }
  return "?";
}

uint64_t case_seed(const std::string& op, DType dtype) {
  return loom::plugin::fnv1a(op + "/" + std::string(name(dtype)));
}

std::string case_id(const std::string& op, const std::string& label, DType dtype, Variant v) {
  std::string l = label;
  std::replace(l.begin(), l.end(), '/', '_');
  return op + "/" + l + "/" + std::string(name(dtype)) + "/" + to_string(v);
}

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with backtracking to the last '*'.
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi, ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++, mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1, ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

CasePlan plan_cases(const CaseFilter& filter) {
  CasePlan plan;
  auto& dispatcher = Dispatcher::instance();
  for (const auto& name : filter.ops)
    if (!dispatcher.find(name)) plan.unknown_ops.push_back(name);
  for (const OpDef* op : dispatcher.ops()) {
    const std::string& name = op->name();
    if (!filter.ops.empty() && std::find(filter.ops.begin(), filter.ops.end(), name) == filter.ops.end())
      continue;
    const opinfo::OpSamples* samples = opinfo::find_op_samples(name);
    if (!samples) {
      // An in-place op is run as the "inplace" variant of its functional
      // form's cases; only an op with neither is untested.
      const std::string functional = opinfo::functional_form(name);
      const OpDef* f = functional != name ? dispatcher.find(functional) : nullptr;
      const bool covered = f && opinfo::find_op_samples(functional) && inplace_partner(*f) == op;
      if (!covered) plan.ops_without_samples.push_back(name);
      else if (!filter.ops.empty()) plan.inplace_of.emplace_back(name, functional);
      continue;
    }
    const bool inplace = inplace_partner(*op) != nullptr;
    const bool out = has_out_form(*op);
    const bool grad = filter.grad && is_differentiable(*op);
    for (DType dtype : dtypes_for(samples->dtypes, registered_dtypes(*op, filter.device_slot), filter.tier)) {
      const uint64_t seed = case_seed(name, dtype);
      const auto made = samples->make(opinfo::SampleContext(dtype, seed));
      size_t n = made.size();
      if (filter.tier == Tier::Quick) n = std::min(n, kQuickSamplesPerOp);
      for (size_t i = 0; i < n; ++i) {
        std::vector<Variant> variants{Variant::Contiguous};
        if (layable(made[i])) variants.push_back(Variant::NonContiguous);
        if (inplace) variants.push_back(Variant::InPlace);
        if (out) variants.push_back(Variant::Out);
        if (grad && is_floating_point(dtype)) variants.push_back(Variant::Grad);
        for (Variant v : variants) {
          CaseSpec c{case_id(name, made[i].label, dtype, v), name, made[i].label, i, dtype, v, seed};
          if (!filter.case_glob.empty() && !glob_match(filter.case_glob, c.id)) continue;
          plan.cases.push_back(std::move(c));
        }
      }
    }
  }
  return plan;
}

}  // namespace loom::conformance
