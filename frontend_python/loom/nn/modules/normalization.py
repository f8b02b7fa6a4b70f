"""LayerNorm, RMSNorm, GroupNorm."""
import numbers

from .. import functional as F
from ..module import Module
from ._params import add_parameter, reset_affine


def _init_normalized(module, normalized_shape, eps, elementwise_affine, device, dtype):
    """The attributes LayerNorm and RMSNorm share: the trailing shape, eps, and the weight."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    module.normalized_shape = tuple(normalized_shape)
    module.eps, module.elementwise_affine = eps, elementwise_affine
    add_parameter(module, "weight", module.normalized_shape, elementwise_affine, device, dtype)


class LayerNorm(Module):
    """Normalises over the trailing ``normalized_shape`` dims, with optional elementwise affine."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        _init_normalized(self, normalized_shape, eps, elementwise_affine, device, dtype)
        add_parameter(self, "bias", self.normalized_shape, elementwise_affine and bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self.weight, self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, with an optional
    elementwise weight (``torch.nn.RMSNorm``); eps None is the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        _init_normalized(self, normalized_shape, eps, elementwise_affine, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self.weight, None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(Module):
    """Normalises each of ``num_groups`` channel groups of (N, C, *), with per-channel affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        add_parameter(self, "weight", (num_channels,), affine, device, dtype)
        add_parameter(self, "bias", (num_channels,), affine, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self.weight, self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
