// lbfgs.cpp — LBFGS (loom/optim/lbfgs.h): PyTorch's iteration, two-loop
// recursion and strong-Wolfe line search (torch/optim/lbfgs.py), as
// Python's loom.optim.LBFGS has them.
#include <loom/autograd.h>
#include <loom/ops.h>
#include <loom/optim/lbfgs.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "update_helpers.h"

namespace loom::optim {
namespace {

double inner(const Tensor& a, const Tensor& b) { return loom::dot(a, b).item<double>(); }
double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }

// The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped
// to the bounds (the bracket by default); the middle when it has none.
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2,
                         std::optional<std::pair<double, double>> bounds = std::nullopt) {
  const auto [lo, hi] = bounds ? *bounds : (x1 <= x2 ? std::pair{x1, x2} : std::pair{x2, x1});
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.0;
}

struct LineSearchResult {
  double loss;
  Tensor flat_grad;
  double t;
  int64_t func_evals;
};

using Objective = std::function<std::pair<double, Tensor>(double t)>;

// A step t along d meeting the strong Wolfe conditions: bracketing, then zoom.
LineSearchResult strong_wolfe(const Objective& obj, double t, const Tensor& d, double f, Tensor g, double gtd,
                              double c1 = 1e-4, double c2 = 0.9, double tolerance_change = 1e-9, int64_t max_ls = 25) {
  const double d_norm = max_abs(d);
  g = g.clone();
  auto [f_new, g_new] = obj(t);
  int64_t evals = 1;
  double gtd_new = inner(g_new, d);

  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  Tensor g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<Tensor> bracket_g;
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new.clone()},
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::abs(gtd_new) <= -c2 * gtd) {
      bracket = {t}, bracket_f = {f_new}, bracket_g = {g_new}, bracket_gtd = {gtd_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new.clone()},
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    // Extrapolate, between 1.01 t and 10 t.
    const double min_step = t + 0.01 * (t - t_prev), max_step = t * 10, tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, std::pair{min_step, max_step});
    t_prev = tmp, f_prev = f_new, g_prev = g_new.clone(), gtd_prev = gtd_new;
    std::tie(f_new, g_new) = obj(t);
    ++evals;
    gtd_new = inner(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {0.0, t}, bracket_f = {f, f_new}, bracket_g = {g, g_new}, bracket_gtd = {gtd, gtd_new};

  // Zoom: shrink the bracket until a point meets the conditions.
  bool insuf_progress = false;
  size_t low = bracket_f[0] <= bracket_f.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::abs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]);
    // Too close to an end of the bracket (10% of its length) twice in a row: move away from it.
    const double bmax = std::max(bracket[0], bracket[1]), bmin = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - t, t - bmin) < eps) {
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::abs(t - bmax) < std::abs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = obj(t);
    ++evals;
    gtd_new = inner(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
      bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = g_new.clone(), bracket_gtd[high] = gtd_new;
      low = bracket_f[0] <= bracket_f[1] ? 0 : 1, high = 1 - low;
    } else {
      if (std::abs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low], bracket_g[high] = bracket_g[low],
        bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = g_new.clone(), bracket_gtd[low] = gtd_new;
    }
  }
  return {bracket_f[low], bracket_g[low], bracket[low], evals};
}

}  // namespace

void LBFGSOptions::visit(const OptionVisitor& f) {
  f("lr", lr_);
  double max_iter = static_cast<double>(max_iter_), history = static_cast<double>(history_size_);
  double max_eval = static_cast<double>(max_eval_.value_or(max_iter_ * 5 / 4));
  double wolfe = line_search_fn_ ? 1 : 0;
  f("max_iter", max_iter);
  f("max_eval", max_eval);
  f("tolerance_grad", tolerance_grad_);
  f("tolerance_change", tolerance_change_);
  f("history_size", history);
  f("line_search_strong_wolfe", wolfe);
  max_iter_ = static_cast<int64_t>(max_iter), history_size_ = static_cast<int64_t>(history);
  max_eval_ = static_cast<int64_t>(max_eval);
  if (wolfe != 0) line_search_fn_ = "strong_wolfe";
  else line_search_fn_.reset();
}

LBFGS::LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults)
    : Optimizer(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults.clone()) {
  const LBFGSOptions& o = options();
  detail::check_option(o.lr() > 0, "LBFGS", "lr", o.lr());
  detail::check_option(o.max_iter() > 0, "LBFGS", "max_iter", static_cast<double>(o.max_iter()));
  detail::check_option(o.history_size() > 0, "LBFGS", "history_size", static_cast<double>(o.history_size()));
  LOOM_CHECK(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe",
             "optim: LBFGS: line_search_fn must be absent or \"strong_wolfe\", got \"", *o.line_search_fn(), "\"");
}

const LBFGSOptions& LBFGS::options() const { return static_cast<const LBFGSOptions&>(param_groups()[0].options()); }

void LBFGS::step() {
  throw Error("optim: LBFGS needs step(closure): a closure that zeroes the gradients, re-evaluates the model, "
              "calls backward() and returns the loss");
}

Tensor LBFGS::gather_flat_grad() const {
  std::vector<Tensor> views;
  for (const Tensor& p : param_groups()[0].params())
    views.push_back(p.grad().defined() ? p.grad().reshape({-1}) : zeros({p.numel()}, p.dtype(), p.device()));
  return cat(views, 0);
}

void LBFGS::add_grad(double step_size, const Tensor& update) {
  int64_t offset = 0;
  for (const Tensor& p : param_groups()[0].params()) {
    const int64_t n = p.numel();
    Tensor target = p;
    target.add_(update.narrow(0, offset, n).view(p.sizes()), step_size);
    offset += n;
  }
}

std::vector<Tensor> LBFGS::clone_params() const {
  std::vector<Tensor> out;
  for (const Tensor& p : param_groups()[0].params()) out.push_back(p.clone());
  return out;
}

void LBFGS::set_params(const std::vector<Tensor>& values) {
  const auto& params = param_groups()[0].params();
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor target = params[i];
    target.copy_(values[i]);
  }
}

std::pair<double, Tensor> LBFGS::directional_evaluate(const LossClosure& closure, const std::vector<Tensor>& x,
                                                      double t, const Tensor& d) {
  add_grad(t, d);
  double loss;
  {
    autograd::EnableGradGuard grad;
    loss = closure().item<double>();
  }
  Tensor flat_grad = gather_flat_grad();
  set_params(x);
  return {loss, flat_grad};
}

Tensor LBFGS::step(const LossClosure& closure) {
  LOOM_CHECK(static_cast<bool>(closure), "optim: LBFGS needs step(closure)");
  autograd::NoGradGuard no_grad;
  const LBFGSOptions& o = options();
  const double lr = o.lr(), tolerance_grad = o.tolerance_grad(), tolerance_change = o.tolerance_change();
  const int64_t max_iter = o.max_iter(), max_eval = o.max_eval().value_or(o.max_iter() * 5 / 4);
  History& h = history_;

  Tensor orig_loss;
  {
    autograd::EnableGradGuard grad;
    orig_loss = closure();
  }
  double loss = orig_loss.item<double>();
  int64_t current_evals = 1;
  ++h.func_evals;
  Tensor flat_grad = gather_flat_grad();
  if (max_abs(flat_grad) <= tolerance_grad) return orig_loss;

  int64_t n_iter = 0;
  while (n_iter < max_iter) {
    ++n_iter;
    ++h.n_iter;
    // The direction: steepest descent first, then the two-loop recursion over the history.
    if (h.n_iter == 1) {
      h.d = flat_grad.neg();
      h.old_dirs.clear(), h.old_stps.clear(), h.ro.clear();
      h.H_diag = 1;
    } else {
      const Tensor y = flat_grad.sub(h.prev_flat_grad);
      const Tensor s = h.d.mul(detail::number_like(h.t, h.d));
      const double ys = inner(y, s);
      if (ys > 1e-10) {
        if (static_cast<int64_t>(h.old_dirs.size()) == o.history_size()) {
          h.old_dirs.pop_front(), h.old_stps.pop_front(), h.ro.pop_front();
        }
        h.old_dirs.push_back(y), h.old_stps.push_back(s), h.ro.push_back(1.0 / ys);
        h.H_diag = ys / inner(y, y);
      }
      const size_t num_old = h.old_dirs.size();
      std::vector<double> al(num_old);
      Tensor q = flat_grad.neg();
      for (size_t i = num_old; i-- > 0;) {
        al[i] = inner(h.old_stps[i], q) * h.ro[i];
        q.add_(h.old_dirs[i], -al[i]);
      }
      Tensor r = q.mul(detail::number_like(h.H_diag, q));
      for (size_t i = 0; i < num_old; ++i) {
        const double be_i = inner(h.old_dirs[i], r) * h.ro[i];
        r.add_(h.old_stps[i], al[i] - be_i);
      }
      h.d = r;
    }
    if (!h.prev_flat_grad.defined()) h.prev_flat_grad = flat_grad.clone();
    else h.prev_flat_grad.copy_(flat_grad);
    h.prev_loss = loss;

    // The step length: scaled by the gradient's size on the first iteration.
    h.t = h.n_iter == 1 ? std::min(1.0, 1.0 / flat_grad.abs().sum().item<double>()) * lr : lr;
    const double gtd = inner(flat_grad, h.d);
    if (gtd > -tolerance_change) break;  // not a descent direction

    int64_t ls_func_evals = 0;
    bool opt_cond = false;
    if (o.line_search_fn()) {
      const std::vector<Tensor> x_init = clone_params();
      const Tensor d = h.d;
      auto obj = [&](double t) { return directional_evaluate(closure, x_init, t, d); };
      LineSearchResult r = strong_wolfe(obj, h.t, h.d, loss, flat_grad, gtd);
      loss = r.loss, flat_grad = r.flat_grad, h.t = r.t, ls_func_evals = r.func_evals;
      add_grad(h.t, h.d);
      opt_cond = max_abs(flat_grad) <= tolerance_grad;
    } else {
      add_grad(h.t, h.d);
      if (n_iter != max_iter) {
        {
          autograd::EnableGradGuard grad;
          loss = closure().item<double>();
        }
        flat_grad = gather_flat_grad();
        opt_cond = max_abs(flat_grad) <= tolerance_grad;
        ls_func_evals = 1;
      }
    }
    current_evals += ls_func_evals;
    h.func_evals += ls_func_evals;

    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (max_abs(h.d.mul(detail::number_like(h.t, h.d))) <= tolerance_change) break;
    if (std::abs(loss - h.prev_loss) < tolerance_change) break;
  }
  return orig_loss;
}

namespace {
Tensor number(double v) { return full({}, v, DType::Float64); }
}  // namespace

StateDict LBFGS::state_dict() const {
  StateDict out = Optimizer::state_dict();
  const History& h = history_;
  out.insert("lbfgs.n_iter", number(static_cast<double>(h.n_iter)));
  out.insert("lbfgs.func_evals", number(static_cast<double>(h.func_evals)));
  if (h.n_iter == 0) return out;
  out.insert("lbfgs.d", h.d.clone());
  out.insert("lbfgs.t", number(h.t));
  out.insert("lbfgs.H_diag", number(h.H_diag));
  out.insert("lbfgs.prev_loss", number(h.prev_loss));
  out.insert("lbfgs.prev_flat_grad", h.prev_flat_grad.clone());
  const int64_t n = h.d.numel();
  auto stacked = [&](const std::deque<Tensor>& list) {
    return list.empty() ? zeros({0, n}, h.d.dtype(), h.d.device())
                        : stack(std::vector<Tensor>(list.begin(), list.end()), 0);
  };
  out.insert("lbfgs.old_dirs", stacked(h.old_dirs));
  out.insert("lbfgs.old_stps", stacked(h.old_stps));
  out.insert("lbfgs.ro", from_vector(std::vector<double>(h.ro.begin(), h.ro.end()), {static_cast<int64_t>(h.ro.size())}));
  return out;
}

void LBFGS::load_state_dict(const StateDict& state) {
  StateDict base;
  History h;
  auto scalar = [&](const char* key) {
    const Tensor* t = state.find(key);
    LOOM_CHECK(t && t->numel() == 1, "optim: LBFGS load_state_dict: missing or non-scalar '", key, "'");
    return t->item<double>();
  };
  for (const auto& [key, tensor] : state)
    if (key.rfind("lbfgs.", 0) != 0) base.insert(key, tensor);
  h.n_iter = static_cast<int64_t>(scalar("lbfgs.n_iter"));
  h.func_evals = static_cast<int64_t>(scalar("lbfgs.func_evals"));
  if (h.n_iter > 0) {
    const Device device = param_groups()[0].params()[0].device();
    auto tensor = [&](const char* key) {
      const Tensor* t = state.find(key);
      LOOM_CHECK(t, "optim: LBFGS load_state_dict: missing '", key, "'");
      return t->to(device).clone();
    };
    h.d = tensor("lbfgs.d"), h.prev_flat_grad = tensor("lbfgs.prev_flat_grad");
    h.t = scalar("lbfgs.t"), h.H_diag = scalar("lbfgs.H_diag"), h.prev_loss = scalar("lbfgs.prev_loss");
    const Tensor dirs = tensor("lbfgs.old_dirs"), stps = tensor("lbfgs.old_stps");
    const std::vector<double> ro = state.at("lbfgs.ro").to(DType::Float64).to_vector<double>();
    LOOM_CHECK(dirs.size(0) == stps.size(0) && dirs.size(0) == static_cast<int64_t>(ro.size()),
               "optim: LBFGS load_state_dict: the history lists differ in length");
    for (int64_t i = 0; i < dirs.size(0); ++i) h.old_dirs.push_back(dirs[i].clone()), h.old_stps.push_back(stps[i].clone());
    h.ro.assign(ro.begin(), ro.end());
  }
  Optimizer::load_state_dict(base);
  history_ = std::move(h);
}

}  // namespace loom::optim
