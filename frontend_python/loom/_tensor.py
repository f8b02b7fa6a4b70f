"""Tensor methods written in Python (thin wrappers over _C)."""
from . import _C

Tensor = _C.Tensor


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates this tensor's gradient into the .grad of the leaves (see loom.autograd.backward)."""
    from . import autograd
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


class RemovableHandle:
    """Returned by register_hook; ``handle.remove()`` takes the hook off."""

    def __init__(self, tensor, hook_id):
        self._tensor, self._id = tensor, hook_id

    def remove(self):
        if self._tensor is not None:
            self._tensor._remove_hook(self._id)
            self._tensor = None


def register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
    return RemovableHandle(self, self._register_hook(hook))


Tensor.backward = backward
Tensor.register_hook = register_hook

