// gradcheck.cpp — analytical Jacobians (one backward per output element)
// against central finite differences, as torch.autograd.gradcheck.
#include "meta.h"

#include <loom/ops.h>

#include <cmath>
#include <sstream>

namespace loom::autograd {
namespace {

// Element `flat` (row-major) of `t` as a 0-d view.
Tensor element(const Tensor& t, int64_t flat) {
  int64_t offset = t.storage_offset();
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    const int64_t n = t.sizes()[d];
    offset += (flat % n) * t.strides()[d];
    flat /= n;
  }
  return t.as_strided({}, {}, offset);
}

std::string index_str(IntArrayRef sizes, int64_t flat) {
  DimVector idx(sizes.size());
  for (size_t d = sizes.size(); d-- > 0;) {
    idx[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return shape_str(idx);
}

bool differentiable_output(const Tensor& t) { return t.defined() && t.is_floating_point(); }

// Every differentiable output's values, concatenated.
std::vector<double> flat_values(const std::vector<Tensor>& outs) {
  std::vector<double> v;
  for (const auto& o : outs) {
    if (!differentiable_output(o)) continue;
    auto x = o.to_vector<double>();
    v.insert(v.end(), x.begin(), x.end());
  }
  return v;
}

struct OutputSlot {
  size_t output;
  int64_t element;
};

}  // namespace

bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) wrt.push_back(i);
  LOOM_CHECK(!wrt.empty(), "gradcheck: no input requires grad");
  std::vector<Tensor> wrt_tensors;
  for (size_t i : wrt) wrt_tensors.push_back(inputs[i]);

  // Analytical: row j of the Jacobian is the gradient of output element j.
  const std::vector<Tensor> outs = fn(inputs);
  std::vector<OutputSlot> slots;
  for (size_t o = 0; o < outs.size(); ++o)
    if (differentiable_output(outs[o]))
      for (int64_t e = 0; e < outs[o].numel(); ++e) slots.push_back({o, e});
  std::vector<std::vector<std::vector<double>>> analytical(wrt.size());  // [input][row][col]
  for (const OutputSlot& s : slots) {
    std::vector<Tensor> gos;
    std::vector<Tensor> roots;
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!differentiable_output(outs[o]) || !outs[o].requires_grad()) continue;
      Tensor g = zeros(outs[o].sizes(), outs[o].dtype(), outs[o].device());
      if (o == s.output) {
        NoGradGuard no_grad;
        element(g, s.element).fill_(1);
      }
      roots.push_back(outs[o]);
      gos.push_back(g);
    }
    std::vector<Tensor> grads(wrt.size());
    if (!roots.empty())
      grads = grad(roots, wrt_tensors, gos, /*retain_graph=*/true, /*create_graph=*/false,
                   /*allow_unused=*/true);
    for (size_t k = 0; k < wrt.size(); ++k) {
      const Tensor& in = wrt_tensors[k];
      if (grads[k].defined()) {
        LOOM_CHECK(grads[k].sizes() == in.sizes(), "gradcheck: the gradient of input ", wrt[k],
                   " has shape ", shape_str(grads[k].sizes()), " but the input has shape ",
                   shape_str(in.sizes()));
        LOOM_CHECK(grads[k].dtype() == in.dtype(), "gradcheck: the gradient of input ", wrt[k],
                   " has dtype ", name(grads[k].dtype()), " but the input has dtype ", name(in.dtype()));
        analytical[k].push_back(grads[k].to_vector<double>());
      } else {
        analytical[k].push_back(std::vector<double>(static_cast<size_t>(in.numel()), 0.0));
      }
    }
  }

  // Numerical: perturb one input element at a time (after the analytical
  // pass: perturbing bumps versions, which would void its saved tensors).
  for (size_t k = 0; k < wrt.size(); ++k) {
    const Tensor& in = wrt_tensors[k];
    for (int64_t e = 0; e < in.numel(); ++e) {
      Tensor x = element(in, e);
      const double orig = x.item<double>();
      std::vector<double> plus, minus;
      {
        NoGradGuard no_grad;
        x.fill_(orig + opt.eps);
      }
      plus = flat_values(fn(inputs));
      {
        NoGradGuard no_grad;
        x.fill_(orig - opt.eps);
      }
      minus = flat_values(fn(inputs));
      {
        NoGradGuard no_grad;
        x.fill_(orig);
      }
      LOOM_CHECK(plus.size() == slots.size(), "gradcheck: the function returned a different number of "
                                              "output elements when called again");
      for (size_t j = 0; j < slots.size(); ++j) {
        const double num = (plus[j] - minus[j]) / (2 * opt.eps);
        const double ana = analytical[k][j][static_cast<size_t>(e)];
        if (std::abs(num - ana) <= opt.atol + opt.rtol * std::abs(num)) continue;
        std::ostringstream msg;
        msg.precision(10);
        msg << "gradcheck: Jacobian mismatch for output " << slots[j].output << " element "
            << index_str(outs[slots[j].output].sizes(), slots[j].element) << " with respect to input "
            << wrt[k] << " element " << index_str(in.sizes(), e) << ": numerical " << num
            << ", analytical " << ana << " (atol " << opt.atol << ", rtol " << opt.rtol << ")";
        throw Error(msg.str());
      }
    }
  }
  return true;
}

bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  std::vector<size_t> wrt;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) wrt.push_back(i);
  LOOM_CHECK(!wrt.empty(), "gradgradcheck: no input requires grad");
  // Random gradients for the outputs become inputs of the checked function.
  std::vector<Tensor> all = inputs;
  std::vector<size_t> out_index;
  {
    const std::vector<Tensor> outs = fn(inputs);
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!differentiable_output(outs[o]) || !outs[o].requires_grad()) continue;
      all.push_back(randn(outs[o].sizes(), outs[o].dtype(), outs[o].device()).requires_grad_());
      out_index.push_back(o);
    }
  }
  LOOM_CHECK(!out_index.empty(), "gradgradcheck: no output requires grad");
  const size_t n = inputs.size();
  auto first_grads = [&](const std::vector<Tensor>& args) {
    std::vector<Tensor> in(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(n));
    const std::vector<Tensor> outs = fn(in);
    std::vector<Tensor> roots, gos, wrt_tensors;
    for (size_t k = 0; k < out_index.size(); ++k) {
      roots.push_back(outs[out_index[k]]);
      gos.push_back(args[n + k]);
    }
    for (size_t i : wrt) wrt_tensors.push_back(in[i]);
    std::vector<Tensor> g = grad(roots, wrt_tensors, gos, /*retain_graph=*/true, /*create_graph=*/true,
                                 /*allow_unused=*/true);
    for (size_t k = 0; k < g.size(); ++k)
      if (!g[k].defined()) g[k] = zeros_like(wrt_tensors[k]);
    return g;
  };
  return gradcheck(first_grads, all, opt);
}

}  // namespace loom::autograd
