"""Identity, Linear, Bilinear."""
import math

from .. import functional as F
from .. import init
from ..module import Module
from ._params import add_parameter, reset_kaiming_uniform


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b, W of shape (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        add_parameter(self, "weight", (out_features, in_features), True, device, dtype)
        add_parameter(self, "bias", (out_features,), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_kaiming_uniform(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1^T A x2 + b, A of shape (out_features, in1_features, in2_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        add_parameter(self, "weight", (out_features, in1_features, in2_features), True, device, dtype)
        add_parameter(self, "bias", (out_features,), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
