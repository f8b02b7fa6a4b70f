"""RMSprop (Hinton), PyTorch 1.13's update: optional momentum and centering."""
from .. import _C
from .._grad_mode import no_grad
from .optimizer import Optimizer


class RMSprop(Optimizer):
    """v = alpha*v + (1-alpha)*g^2;  avg = sqrt(v [- mean(g)^2 if centered]) + eps;
    p -= lr * g/avg  (or, with momentum, buf = momentum*buf + g/avg; p -= lr * buf)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 foreach=None, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= momentum:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if not 0.0 <= alpha:
            raise ValueError("Invalid alpha value: {}".format(alpha))
        if differentiable:
            raise NotImplementedError("RMSprop(differentiable=True) is not supported")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, alpha, eps, momentum = group["lr"], group["alpha"], group["eps"], group["momentum"]
                centered = group["centered"]
                for p, grad, state in self._grads(group):
                    if len(state) == 0:
                        state["step"] = 0
                        state["square_avg"] = _C.zeros_like(p)
                        if momentum > 0:
                            state["momentum_buffer"] = _C.zeros_like(p)
                        if centered:
                            state["grad_avg"] = _C.zeros_like(p)
                    state["step"] += 1
                    square_avg = state["square_avg"]
                    # lerp_(x, 1 - alpha) is alpha*v + (1-alpha)*x in one op.
                    square_avg.lerp_(grad.square(), 1 - alpha)
                    if centered:
                        grad_avg = state["grad_avg"]
                        grad_avg.lerp_(grad, 1 - alpha)
                        avg = square_avg.sub(grad_avg.square()).sqrt_()
                    else:
                        avg = square_avg.sqrt()
                    avg.add_(eps)
                    if momentum > 0:
                        buf = state["momentum_buffer"]
                        buf.mul_(momentum).add_(grad.div(avg))
                        p.add_(buf, alpha=-lr)
                    else:
                        p.add_(grad.div(avg), alpha=-lr)
        return loss
