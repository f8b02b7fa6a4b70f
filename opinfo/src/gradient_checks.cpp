// gradient_checks.cpp — the registry behind LOOM_GRAD_CASES, the gradchecks
// made from samples marked `gradcheck`, and the input helpers (see
// loom/opinfo.h).
#include <loom/opinfo.h>
#include <loom/plugin/fnv1a.hpp>

#include <stdexcept>

namespace loom::opinfo {

namespace {
std::map<std::string, CaseMaker>& registry() {
  static std::map<std::string, CaseMaker> r;
  return r;
}
std::map<std::string, std::string>& registered_at() {
  static std::map<std::string, std::string> r;
  return r;
}

// A seed of its own for each op (FNV-1a of the name), so the samples'
// inputs differ between ops but not between runs.
uint64_t seed_of(const std::string& op) { return loom::plugin::fnv1a(op); }

// What arg() and constant() draw from: reseeded from the op's name before
// its cases are made, so a case's inputs do not depend on what ran before
// (a random point may sit on a tie; it must do so in every run or none).
Generator& case_generator() {
  static Generator g;
  return g;
}

// The same values as `t` in a transposed buffer, as strided_arg lays them.
Tensor strided_copy(const Tensor& t) {
  return t.transpose(0, 1).contiguous().transpose(0, 1);
}

// `s` as a gradcheck: its floating tensors are the inputs (strided copies
// when `strided`); the function puts them back in their places and runs the
// op, returning its floating outputs.
GradCase case_of(const OpDef& op, const OpSamples& info, const Sample& s, bool strided) {
  GradCase c;
  c.label = "sample '" + s.label + "'" + (strided ? ", strided" : "");
  c.check_double = info.gradgradcheck;
  std::vector<size_t> slots;  // where each input goes in s.tensors
  for (size_t i = 0; i < s.tensors.size(); ++i) {
    const auto& t = s.tensors[i];
    if (!t || !t->is_floating_point()) continue;
    Tensor leaf = (strided && t->dim() >= 2 ? strided_copy(*t) : t->clone()).detach();
    c.inputs.push_back(leaf.requires_grad_());
    slots.push_back(i);
  }
  c.fn = [&op, s, slots](const Args& x) {
    std::vector<std::optional<Tensor>> tensors = s.tensors;
    for (size_t k = 0; k < slots.size(); ++k) tensors[slots[k]] = x[k];
    RunOptions options;
    options.tensors = &tensors;
    std::vector<Tensor> floating;
    for (Tensor& r : run_sample(op, s, options))
      if (r.is_floating_point()) floating.push_back(std::move(r));
    return floating;
  };
  return c;
}

bool any_matrix(const Sample& s) {
  for (const auto& t : s.tensors)
    if (t && t->is_floating_point() && t->dim() >= 2) return true;
  return false;
}
}  // namespace

bool register_grad_cases(const std::string& op, CaseMaker make, const char* file, int line) {
  const std::string where = std::string(file) + ":" + std::to_string(line);
  if (!registry().emplace(op, std::move(make)).second)
    throw std::logic_error("gradcheck cases for '" + op + "' registered twice: " + registered_at()[op] + " and " +
                           where);
  registered_at()[op] = where;
  return true;
}

const std::map<std::string, CaseMaker>& grad_cases() { return registry(); }

std::vector<GradCase> gradient_checks(const OpDef& op) {
  std::vector<GradCase> checks;
  const OpSamples* info = find_op_samples(op.name());
  if (info && (info->dtypes & dtype_bit(DType::Float64))) {
    for (const Sample& s : info->make(SampleContext(DType::Float64, seed_of(op.name())))) {
      if (!s.gradcheck) continue;
      checks.push_back(case_of(op, *info, s, false));
      if (any_matrix(s)) checks.push_back(case_of(op, *info, s, true));
    }
  }
  if (auto it = registry().find(op.name()); it != registry().end()) {
    case_generator().manual_seed(seed_of(op.name()));
    for (GradCase& c : it->second()) checks.push_back(std::move(c));
  }
  return checks;
}

Tensor constant(std::vector<int64_t> shape, double lo, double hi) {
  Tensor t = rand(shape, DType::Float64, cpu_device(), case_generator());
  autograd::NoGradGuard no_grad;
  return t * (hi - lo) + lo;
}

Tensor arg(std::vector<int64_t> shape, double lo, double hi) {
  return constant(std::move(shape), lo, hi).requires_grad_();
}

Tensor leaf(const std::vector<double>& values, std::vector<int64_t> shape) {
  return from_vector<double>(values, shape).requires_grad_();
}
Tensor ints(const std::vector<int64_t>& values, std::vector<int64_t> shape) { return from_vector<int64_t>(values, shape); }
Tensor ints32(const std::vector<int32_t>& values, std::vector<int64_t> shape) {
  return from_vector<int32_t>(values, shape);
}
Tensor mask(const std::vector<bool>& values, std::vector<int64_t> shape) { return from_vector<bool>(values, shape); }

Tensor strided_arg(std::vector<int64_t> shape, double lo, double hi) {
  if (shape.size() < 2) throw std::logic_error("strided_arg needs at least 2 dims");
  std::vector<int64_t> swapped = shape;
  std::swap(swapped[0], swapped[1]);
  Tensor t = constant(swapped, lo, hi).transpose(0, 1);
  return t.detach().requires_grad_();
}

}  // namespace loom::opinfo
