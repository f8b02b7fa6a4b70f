"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), as PyTorch 1.13."""
from .adam import _adam_step, _check_adam_args
from .optimizer import Optimizer


class AdamW(Optimizer):
    """Adam whose weight decay shrinks the parameters directly: p *= 1 - lr * weight_decay."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=False):
        _check_adam_args(lr, betas, eps, weight_decay, differentiable, fused)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        foreach=foreach, maximize=maximize, capturable=capturable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        _adam_step(self, decoupled=True)
        return loss
