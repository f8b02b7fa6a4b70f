"""The restricted unpickler of loom.load(weights_only=True), the default as in PyTorch 2.6.

A pickle can name any global and call it, so loading an untrusted pickle can run code. This
unpickler resolves only the globals a checkpoint needs: tensors, parameters, storages, dtypes,
devices, sizes (torch's names, mapped to loom's), OrderedDict, set, frozenset, bytes (through
_codecs.encode, pickle protocol 2's way), complex, slice, range, numpy arrays, scalars and dtypes
(data, not code) — and whatever the user allow-lists with add_safe_globals / safe_globals. Any
other global is refused with an UnpicklingError that names it and says how to allow it.
"""
import collections
import contextlib
import pickle

_user_globals = {}  # (module, name) -> object, added by add_safe_globals


def _qualified(obj):
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if module is None or name is None:
        raise TypeError(f"add_safe_globals: {obj!r} has no __module__ / __qualname__; pass (obj, 'module.name')")
    return module, name


def add_safe_globals(safe_globals):
    """Allows these globals (classes or functions, or (obj, "module.name") pairs) in weights_only loads."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            obj, full = entry
            module, _, name = full.rpartition(".")
        else:
            obj = entry
            module, name = _qualified(obj)
        _user_globals[(module, name)] = obj


def get_safe_globals():
    return list(_user_globals.values())


def clear_safe_globals():
    _user_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """with loom.serialization.safe_globals([MyClass]): allows them inside the block only."""
    saved = dict(_user_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_globals.clear()
        _user_globals.update(saved)


def _builtin_globals():
    import codecs
    return {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("builtins", "set"): set, ("builtins", "frozenset"): frozenset, ("builtins", "bytearray"): bytearray,
        ("builtins", "complex"): complex, ("builtins", "slice"): slice, ("builtins", "range"): range,
        # Protocol 2 names builtins as Python 2's __builtin__ module.
        ("__builtin__", "set"): set, ("__builtin__", "frozenset"): frozenset, ("__builtin__", "bytearray"): bytearray,
        ("__builtin__", "complex"): complex, ("__builtin__", "slice"): slice, ("__builtin__", "range"): range,
        ("_codecs", "encode"): codecs.encode,
    }


def _numpy_global(module, name):
    """numpy's array / scalar reconstruction and dtypes (numpy 1.x and 2.x names)."""
    if module not in ("numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.dtypes"):
        return None
    import numpy as np
    if name == "_reconstruct":
        try:
            from numpy._core.multiarray import _reconstruct
        except ImportError:
            from numpy.core.multiarray import _reconstruct
        return _reconstruct
    if name == "scalar":
        try:
            from numpy._core.multiarray import scalar
        except ImportError:
            from numpy.core.multiarray import scalar
        return scalar
    if (module, name) in (("numpy", "ndarray"), ("numpy", "dtype")):
        return getattr(np, name)
    if module == "numpy.dtypes" and name.endswith("DType"):
        return getattr(np.dtypes, name, None)
    return None


class Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        from ._torch_format import TORCH_GLOBALS
        for table in (TORCH_GLOBALS, _builtin_globals(), _user_globals):
            hit = table.get((module, name))
            if hit is not None:
                return hit
        hit = _numpy_global(module, name)
        if hit is not None:
            return hit
        raise pickle.UnpicklingError(
            f"Weights only load failed: the file names the global {module}.{name}, which a weights_only load "
            f"does not run. If you trust the file, call loom.load(..., weights_only=False), or allow this one "
            f"global with loom.serialization.add_safe_globals([{name}]) (or the safe_globals context manager).")
