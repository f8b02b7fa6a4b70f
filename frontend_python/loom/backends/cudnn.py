"""loom.backends.cudnn: torch.backends.cudnn's flags and queries.

``is_available()`` is True when the CUDA plugin sees a GPU: loom's CUDA
plugin runs convolutions, batch norm and RNNs through cuDNN (a build with
``-DLOOM_GPU_VENDOR_LIBRARIES=OFF`` uses its own kernels instead, and still
answers True: it is a developer build). ``version()`` asks the cuDNN library
itself. The flags are kept and read back, as programs set them; loom's cuDNN
calls pick their algorithms themselves, so ``benchmark`` and
``deterministic`` change nothing yet.
"""
import ctypes

from .. import _C

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10

_version = None


def is_available():
    return _C._available_device_count("cuda") > 0


def version():
    """cuDNN's version as an int (90100 for 9.1.0), or None without a GPU or cuDNN."""
    global _version
    if _version is None and is_available():
        for name in ("libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"):
            try:
                _version = int(ctypes.CDLL(name).cudnnGetVersion())
                break
            except OSError:
                continue
    return _version


def is_acceptable(tensor):
    return enabled and is_available() and tensor.device.type == "cuda"


class flags:
    """with loom.backends.cudnn.flags(enabled=False, ...): sets the flags inside the block."""

    def __init__(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
        self._new = dict(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                         deterministic=deterministic, allow_tf32=allow_tf32)

    def __enter__(self):
        g = globals()
        self._old = {k: g[k] for k in self._new}
        g.update(self._new)

    def __exit__(self, *exc):
        globals().update(self._old)
        return False
