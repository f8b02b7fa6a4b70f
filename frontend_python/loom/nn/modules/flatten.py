"""Flatten, Unflatten."""
from ..module import Module


class Flatten(Module):
    """Flattens dims start_dim..end_dim (default: all but the batch dim)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size``."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, str):
            raise NotImplementedError("Unflatten: named dims are not supported")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found {unflattened_size!r}")
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, list(self.unflattened_size))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
