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
    """One Adam/AdamW step over every group. Per parameter (defaults): one op, _adam_step_
    (weight decay, both running averages by lerp, the update), instead of PyTorch 1.13's 8,
    with the bias corrections and eps folded into its scalars:
        lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps) = lr*sqrt(bc2)/bc1 * m / (sqrt(v) + eps*sqrt(bc2)).
    amsgrad runs the steps as ops (lerp_ twice, maximum, _adam_update_)."""
    maximum = _C.Tensor.maximum
    adam_update_ = _C.Tensor._adam_update_
    adam_step_ = _C.Tensor._adam_step_
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
                decay = 1 - lr * weight_decay if decoupled and weight_decay != 0 else 1.0
                step = state["step"] + 1
                state["step"] = step
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                bias_correction1 = 1 - beta1 ** step
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                step_size = lr * bias_correction2_sqrt / bias_correction1
                eps_hat = eps * bias_correction2_sqrt
                if not amsgrad:
                    # The whole step in one op (_adam_step_): one pass, one launch on a GPU.
                    adam_step_(p, grad, exp_avg, exp_avg_sq, decay, beta1, beta2, step_size, eps_hat)
                    continue
                if decay != 1.0:
                    p.mul_(decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.lerp_(grad.square(), 1 - beta2)
                second = state["max_exp_avg_sq"]
                second.copy_(maximum(second, exp_avg_sq))
                adam_update_(p, exp_avg, second, step_size, eps_hat)


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
