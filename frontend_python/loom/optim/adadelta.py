"""Adadelta (Zeiler 2012), PyTorch 1.13's update."""
from .. import _C
from .._grad_mode import no_grad
from .optimizer import Optimizer


class Adadelta(Optimizer):
    """v = rho v + (1-rho) g^2;  d = sqrt(u + eps) / sqrt(v + eps) * g;  u = rho u + (1-rho) d^2;  p -= lr d."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: {}".format(rho))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, rho, eps = group["lr"], group["rho"], group["eps"]
                for p, grad, state in self._grads(group):
                    if len(state) == 0:
                        state["step"] = 0.0
                        state["square_avg"] = _C.zeros_like(p)
                        state["acc_delta"] = _C.zeros_like(p)
                    state["step"] += 1
                    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                    square_avg.mul_(rho).add_(grad.square(), alpha=1 - rho)
                    std = square_avg.add(eps).sqrt_()
                    delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                    acc_delta.mul_(rho).add_(delta.square(), alpha=1 - rho)
                    p.add_(delta, alpha=-lr)
        return loss
