"""autocast: a context manager (and decorator) turning on the core's per-op casting for one device
type over a block, as torch.autocast; and custom_fwd / custom_bwd for autograd.Functions."""
import functools
import warnings

from .. import _C

_LOW = ("float16", "bfloat16")


def _dtype_name(dtype):
    return repr(dtype).rsplit(".", 1)[-1]


def is_autocast_available(device_type):
    try:
        _C._is_autocast_enabled(device_type)
        return True
    except RuntimeError:
        return False


class autocast:
    """with loom.autocast("cuda"): matmuls, linears and convolutions run in float16 (bfloat16 on
    the CPU by default), reductions, losses, softmax and norms in float32, cat / stack in the widest
    input dtype. Per thread; nestable; usable as a decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type).__name__}`")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else _C._get_autocast_dtype(device_type)
        self._enabled = bool(enabled)
        if _dtype_name(self.fast_dtype) not in _LOW + ("float32",):
            raise RuntimeError(f"In {device_type} autocast, the dtype must be float16 or bfloat16, "
                               f"got {self.fast_dtype}")
        if self._enabled and device_type != "cpu" and _C._available_device_count(device_type) == 0:
            warnings.warn(f"User provided device_type of '{device_type}', but no {device_type} device is "
                          "available. Disabling", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._prev = (_C._is_autocast_enabled(self.device), _C._get_autocast_dtype(self.device))
        _C._set_autocast_dtype(self.device, self.fast_dtype)
        _C._set_autocast_enabled(self.device, self._enabled)
        return self

    def __exit__(self, exc_type, exc, tb):
        enabled, dtype = self._prev
        _C._set_autocast_enabled(self.device, enabled)
        _C._set_autocast_dtype(self.device, dtype)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return func(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type="cuda"):
    return is_autocast_available(device_type) and _C._is_autocast_enabled(device_type)


def get_autocast_dtype(device_type):
    return _C._get_autocast_dtype(device_type)


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # torch's one-argument form: the cuda state
        device_type, enabled = "cuda", device_type
    _C._set_autocast_enabled(device_type, bool(enabled))


def _cast(value, dtype):
    from .. import Tensor
    if isinstance(value, Tensor) and value.is_floating_point() and value.dtype != _C.float64:
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type="cuda", cast_inputs=None):
    """For an autograd.Function's forward: with cast_inputs, runs it with autocast off and its
    floating inputs cast to that dtype (when autocast is on); else as the autocast state is. The
    state is kept for custom_bwd."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(ctx, *args, **kwargs):
        on = is_autocast_enabled(device_type)
        ctx._fwd_autocast = (device_type, on, get_autocast_dtype(device_type) if on else None)
        if cast_inputs is None or not on:
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(ctx, *_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
    return forward


def custom_bwd(bwd=None, *, device_type="cuda"):
    """For an autograd.Function's backward: runs it with the autocast state its forward had."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(ctx, *args, **kwargs):
        dev, on, dtype = getattr(ctx, "_fwd_autocast", (device_type, False, None))
        with autocast(dev, dtype=dtype, enabled=on):
            return bwd(ctx, *args, **kwargs)
    return backward
