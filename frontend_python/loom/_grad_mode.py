"""no_grad / enable_grad / set_grad_enabled: context managers and decorators."""
import functools

from . import _C


class _GradModeGuard:
    _enabled = True

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeGuard):
    """Ops inside record no graph (``with loom.no_grad():`` or ``@loom.no_grad()``)."""
    _enabled = False


class enable_grad(_GradModeGuard):
    """Ops inside record a graph even within no_grad."""
    _enabled = True


class set_grad_enabled(_GradModeGuard):
    """Sets grad mode to ``mode`` now (like PyTorch); as a context, restores it on exit."""

    def __init__(self, mode):
        self._prev = _C.is_grad_enabled()
        self._enabled = bool(mode)
        _C._set_grad_enabled(self._enabled)

    def __enter__(self):
        return self

    def __call__(self, fn):
        mode = self._enabled
        _C._set_grad_enabled(self._prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper
