"""Dropout."""
from .. import functional as F
from ..module import Module


class Dropout(Module):
    """Zeroes elements with probability p in training (scaling the rest by 1/(1-p)); identity in eval."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _FeatureDropout(Dropout):
    _fn = None

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)


class Dropout1d(_FeatureDropout):
    """Zeroes whole channels of (N, C, L) / (C, L) inputs in training."""
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_FeatureDropout):
    """Zeroes whole channels of (N, C, H, W) / (C, H, W) inputs in training."""
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_FeatureDropout):
    """Zeroes whole channels of (N, C, D, H, W) / (C, D, H, W) inputs in training."""
    _fn = staticmethod(F.dropout3d)
