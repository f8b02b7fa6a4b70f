"""clip_grad_norm_ and clip_grad_value_, as torch.nn.utils."""
import math
import warnings

import loom as _loom


def _grads(parameters):
    if isinstance(parameters, _loom.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scales the gradients in place so that their joint norm is at most max_norm; returns the norm
    before clipping (a 0-d tensor). The norm is that of all gradients together, as one vector."""
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return _loom.tensor(0.0)
    device = grads[0].device
    with _loom.no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max().to(device) for g in grads]
            total = norms[0] if len(norms) == 1 else _loom.stack(norms).max()
        else:
            norms = [g.detach().norm(norm_type).to(device) for g in grads]
            total = _loom.stack(norms).norm(norm_type)
        if error_if_nonfinite and not bool(total.isfinite()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        # As PyTorch: multiply by min(max_norm / (total + 1e-6), 1) without a host sync.
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device, g.dtype))
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("nn.utils.clip_grad_norm is now deprecated in favor of nn.utils.clip_grad_norm_.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element to [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with _loom.no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)
