// optimizer_state_dict.cpp — Optimizer::state_dict / load_state_dict (the
// layout is documented in loom/optim/optimizer.h).
#include <loom/autograd.h>
#include <loom/error.h>
#include <loom/ops.h>
#include <loom/optim/optimizer.h>

#include <string>
#include <unordered_set>

namespace loom::optim {

namespace {

std::string group_key(size_t g, std::string_view name) {
  return "param_groups." + std::to_string(g) + "." + std::string(name);
}

std::string state_key(size_t index, std::string_view name) {
  return "state." + std::to_string(index) + "." + std::string(name);
}

Tensor number(double value) { return full({}, value, DType::Float64); }

// The 0-d tensor at `key` as a double; names the key when absent or not 0-d.
double read_number(const StateDict& state, const std::string& key) {
  const Tensor* t = state.find(key);
  LOOM_CHECK(t, "optim: load_state_dict: missing '", key, "'");
  LOOM_CHECK(t->numel() == 1, "optim: load_state_dict: '", key, "' should hold one number, got shape ",
             shape_str(t->sizes()));
  return t->to(DType::Float64).cpu().item<double>();
}

}  // namespace

StateDict Optimizer::state_dict() const {
  autograd::NoGradGuard no_grad;
  const std::vector<std::string> names = state_names();
  StateDict out;
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    std::vector<int64_t> indices(group.params().size());
    for (size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<int64_t>(index + i);
    out.insert(group_key(g, "params"),
               from_vector(indices, {static_cast<int64_t>(indices.size())}));
    const_cast<OptimizerOptions&>(group.options()).visit([&](std::string_view name, double& value) {
      out.insert(group_key(g, name), number(value));
    });
    for (size_t i = 0; i < group.params().size(); ++i, ++index) {
      if (i >= state_[g].size() || !state_[g][i].initialized()) continue;
      const ParamState& s = state_[g][i];
      out.insert(state_key(index, "step"), number(s.step));
      for (size_t b = 0; b < names.size() && b < s.buffers.size(); ++b)
        if (s.buffers[b].defined()) out.insert(state_key(index, names[b]), s.buffers[b].detach().clone());
    }
  }
  return out;
}

void Optimizer::load_state_dict(const StateDict& state) {
  autograd::NoGradGuard no_grad;
  const std::vector<std::string> names = state_names();
  std::unordered_set<std::string> used;
  auto take = [&](const std::string& key) { used.insert(key); return state.find(key); };

  // Everything is checked and built before anything is written, so a bad
  // dict leaves the optimizer as it was.
  std::vector<std::unique_ptr<OptimizerOptions>> options;
  std::vector<std::vector<ParamState>> states;
  size_t saved_groups = 0;
  while (state.contains(group_key(saved_groups, "params"))) ++saved_groups;
  LOOM_CHECK(saved_groups == groups_.size(), "optim: load_state_dict: the saved optimizer has ", saved_groups,
             " parameter groups but this one has ", groups_.size());
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const ParamGroup& group = groups_[g];
    const std::string params_key = group_key(g, "params");
    const Tensor* saved_params = take(params_key);
    LOOM_CHECK(saved_params, "optim: load_state_dict: missing '", params_key, "'");
    LOOM_CHECK(saved_params->numel() == static_cast<int64_t>(group.params().size()),
               "optim: load_state_dict: parameter group ", g, " has ", group.params().size(),
               " parameters but the saved group has ", saved_params->numel());
    auto opts = group.options().clone();
    opts->visit([&](std::string_view name, double& value) {
      const std::string key = group_key(g, name);
      used.insert(key);
      value = read_number(state, key);
    });
    options.push_back(std::move(opts));

    std::vector<ParamState> group_states(group.params().size());
    for (size_t i = 0; i < group.params().size(); ++i, ++index) {
      const Tensor& p = group.params()[i];
      ParamState& s = group_states[i];
      s.buffers.resize(names.size());
      bool any = false;
      for (size_t b = 0; b < names.size(); ++b) {
        const std::string key = state_key(index, names[b]);
        const Tensor* t = take(key);
        if (!t) continue;
        LOOM_CHECK(t->sizes() == p.sizes(), "optim: load_state_dict: '", key, "' has shape ",
                   shape_str(t->sizes()), " but parameter ", index, " has shape ", shape_str(p.sizes()));
        s.buffers[b] = t->to(p.device(), p.dtype()).clone();
        any = true;
      }
      const std::string step_key = state_key(index, "step");
      if (state.contains(step_key)) {
        used.insert(step_key);
        s.step = read_number(state, step_key);
        any = true;
      }
      if (!any) s.buffers.clear();  // never stepped
    }
    states.push_back(std::move(group_states));
  }
  for (const auto& [key, tensor] : state) {
    LOOM_CHECK(used.count(key), "optim: load_state_dict: unexpected entry '", key,
               "' (another optimizer's state, or more parameter groups or parameters than this one has)");
  }
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].set_options(std::move(options[g]));
  state_ = std::move(states);
}

}  // namespace loom::optim
