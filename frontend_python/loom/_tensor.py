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


def numpy(self):
    import numpy as np
    if self.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    return np.array(self.tolist(), dtype=_numpy_dtype(self.dtype))


def _numpy_dtype(dt):
    import numpy as np
    return {"bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
            "int64": np.int64, "float16": np.float16, "float32": np.float32, "float64": np.float64}[repr(dt)[5:]]


Tensor.backward = backward
Tensor.register_hook = register_hook
Tensor.numpy = numpy



# torch.<name>(t, ...) for the Tensor methods that are views or list ops
# rather than catalog ops (the catalog's are module functions already).
_METHOD_FUNCTIONS = ("reshape", "transpose", "t", "permute", "unsqueeze", "squeeze", "flatten", "unflatten",
                     "movedim", "narrow", "select", "split", "chunk", "unbind", "tile", "argsort", "detach",
                     "clone", "numel")


def _method_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"loom.{name}(t, ...) is t.{name}(...)"
    return fn


def install_method_functions(namespace):
    for name in _METHOD_FUNCTIONS:
        namespace.setdefault(name, _method_function(name))
