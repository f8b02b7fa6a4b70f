"""nn.init: in-place initialisers with PyTorch's defaults and fan computations (run under no_grad)."""
import math

import loom as _loom  # catalog ops, looked up at call time
from .. import _C
from .._grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (PyTorch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps, num_output_fmaps = tensor.size(1), tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills ``tensor`` from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills ``tensor`` from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills ``tensor`` from N(mean, std^2) truncated to [a, b] (by redrawing the values outside)."""
    if not a < b:
        raise ValueError(f"trunc_normal_: a ({a}) must be smaller than b ({b})")
    with no_grad():
        tensor.normal_(mean, std)
        # Resample out-of-range entries; loom has no erfinv for PyTorch's inverse-CDF method.
        for _ in range(1000):
            bad = (tensor < a) | (tensor > b)
            if not bool(bad.any()):
                return tensor
            tensor.copy_(_loom.where(bad, _C.empty_like(tensor).normal_(mean, std), tensor))
        return tensor.clamp_(a, b)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fills a 2-D ``tensor`` with the identity."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_C.eye(tensor.size(0), tensor.size(1), dtype=tensor.dtype, device=tensor.device))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if 0 in tuple(tensor.shape):
        return tensor  # PyTorch warns and leaves an empty tensor alone
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan) (He et al.)."""
    if 0 in tuple(tensor.shape):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0.0, gain / math.sqrt(fan))
