"""loom.library: define new ops and implement them in Python, per device.

    lib = loom.library.Library("myext")
    lib.define("scaled_add(Tensor self, Tensor other, float alpha) -> Tensor")

    @lib.impl("scaled_add", "cpu")
    def scaled_add(a, b, alpha):
        return a + b * alpha

    loom.scaled_add(x, y, 0.5)      # and x.scaled_add(y, 0.5)

A defined op joins the catalog like any other: it is dispatched by device,
falls back to the CPU implementation on a device without one, and appears as
``loom.<name>`` and as a Tensor method. Shapes and dtypes follow the
elementwise rule (broadcasting, type promotion); the implementation's result
must match them. Autograd differentiates such an op only through what the
implementation records, so for gradients write it as a loom.autograd.Function.
"""
from . import _C, _ops


class Library:
    def __init__(self, name):
        self.name = name

    def define(self, schema):
        """Adds the op ``schema`` ("name(Tensor self, ...) -> Tensor") to the catalog."""
        _C._library_define(self.name, schema)
        import loom
        _ops.install(vars(loom))

    def impl(self, op, device_type, fn=None):
        """Implements ``op`` on ``device_type`` ("cpu", "sim", ...) with ``fn``; usable as a decorator."""
        if fn is None:
            return lambda f: self.impl(op, device_type, f) or f
        _C._library_impl(self.name, op, device_type, fn)
        return fn
