"""SGD with momentum, dampening, Nesterov, weight decay and maximize (PyTorch 1.13's update)."""
from .. import _C
from .._grad_mode import no_grad
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum.

    buf = momentum * buf + (1 - dampening) * g   (buf = g on the first step)
    p  -= lr * (g + momentum * buf if nesterov else buf)
    """

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise NotImplementedError("SGD(differentiable=True) is not supported")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def step(self, closure=None):
        """Per parameter with momentum, after the first step: one op, _sgd_step_ (weight decay,
        the buffer's update, the parameter's), instead of four with a temporary."""
        loss = self._closure_loss(closure)
        sgd_step_ = _C.Tensor._sgd_step_
        with no_grad():
            for group in self.param_groups:
                lr, momentum = group["lr"], group["momentum"]
                dampening, nesterov = group["dampening"], group["nesterov"]
                weight_decay = group["weight_decay"]
                fused = momentum != 0 and not group.get("maximize", False)
                for p, d_p, state in self._grads(group, l2=not fused):
                    buf = state.get("momentum_buffer")
                    # The buffer as the parameter (not left in another dtype by a later .to()).
                    if fused and buf is not None and buf.dtype == p.dtype and buf.shape == p.shape and \
                            buf.device == p.device and d_p.dtype == p.dtype:
                        sgd_step_(p, d_p, buf, weight_decay, momentum, dampening, nesterov, lr)
                        continue
                    if fused and weight_decay != 0:
                        d_p = d_p.add(p, alpha=weight_decay)
                    if momentum != 0:
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = d_p.detach().clone()
                        else:
                            buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                        d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
                        state["momentum_buffer"] = buf
                    else:
                        state["momentum_buffer"] = None
                    p.add_(d_p, alpha=-lr)
        return loss
