"""Adagrad (Duchi et al.), PyTorch 1.13's update (dense gradients)."""
from .. import _C
from .._grad_mode import no_grad
from .optimizer import Optimizer


class Adagrad(Optimizer):
    """sum += g^2;  p -= lr / (1 + (step-1)*lr_decay) * g / (sqrt(sum) + eps)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= lr_decay:
            raise ValueError("Invalid lr_decay value: {}".format(lr_decay))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: {}".format(initial_accumulator_value))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def add_param_group(self, param_group):
        # PyTorch creates Adagrad's state eagerly, when a parameter joins.
        super().add_param_group(param_group)
        self._init_state(self.param_groups[-1])

    def _init_state(self, group):
        for p in group["params"]:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0.0
                state["sum"] = _C.full_like(p, group["initial_accumulator_value"])

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
                for p, grad, state in self._grads(group):
                    step = state["step"] + 1
                    state["step"] = step
                    clr = lr / (1 + (step - 1) * lr_decay)
                    state_sum = state["sum"]
                    state_sum.add_(grad.square())
                    std = state_sum.sqrt().add_(eps)
                    p.add_(grad.div(std), alpha=-clr)
        return loss
