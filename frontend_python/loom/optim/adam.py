"""Adam (and the update AdamW shares), PyTorch 1.13's formulas with fewer ops per parameter."""
import math

from .. import _C
from .._grad_mode import no_grad
from .optimizer import Optimizer


def _check_adam_args(lr, betas, eps, weight_decay, differentiable, fused):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported")
    if fused:
        raise NotImplementedError("fused=True is not supported")


def _adam_step(optimizer, decoupled):
    """One Adam/AdamW step over every group. Per parameter (defaults): 4 ops instead of
    PyTorch's 8, using lerp_ for the running averages and folding the bias corrections and
    eps into the scalars of the fused update _adam_update_:  lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps)
                     = lr*sqrt(bc2)/bc1 * m / (sqrt(v) + eps*sqrt(bc2))."""
    maximum = _C.Tensor.maximum
    adam_update_ = _C.Tensor._adam_update_
    with no_grad():
        for group in optimizer.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            weight_decay, amsgrad = group["weight_decay"], group["amsgrad"]
            for p, grad, state in optimizer._grads(group, l2=not decoupled):
                if len(state) == 0:
                    state["step"] = 0.0
                    state["exp_avg"] = _C.zeros_like(p)
                    state["exp_avg_sq"] = _C.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _C.zeros_like(p)
                if decoupled and weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                step = state["step"] + 1
                state["step"] = step
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.lerp_(grad.square(), 1 - beta2)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                second = exp_avg_sq
                if amsgrad:
                    second = state["max_exp_avg_sq"]
                    second.copy_(maximum(second, exp_avg_sq))
                # One fused pass (the catalog op _adam_update_) instead of sqrt, add_, div, add_.
                adam_update_(p, exp_avg, second, lr * bias_correction2_sqrt / bias_correction1,
                             eps * bias_correction2_sqrt)


class Adam(Optimizer):
    """Adam (Kingma & Ba), with L2 weight decay added to the gradient and optional AMSGrad."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
        _check_adam_args(lr, betas, eps, weight_decay, differentiable, fused)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        _adam_step(self, decoupled=False)
        return loss
