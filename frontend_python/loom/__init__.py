"""loom: a PyTorch-style tensor library whose devices are plugins.

    import loom
    x = loom.randn(3, 4, requires_grad=True)
    loss = (x @ x.T).relu().sum()
    loss.backward()

Every op of loom's catalog is here as a function (``loom.<op>``) and, when
its first argument is ``self``, as a Tensor method, generated from the op's
schema (see ``_ops.py``): an op a C++ library or a plugin defines shows up
without binding code.
"""
from . import _C
from ._C import __version__  # noqa: F401  (CMake's PROJECT_VERSION)
from ._C import (  # noqa: F401  (the public names)
    Tensor, dtype, device, tensor, empty, zeros, ones, full, rand, randn, randint, arange,
    linspace, eye, empty_like, zeros_like, ones_like, full_like, rand_like, randn_like,
    randperm, scalar_tensor, is_grad_enabled, _dtype_from_name,
    OutOfMemoryError,  # a RuntimeError; raised when any device cannot allocate
    DeviceError,  # a RuntimeError; a device or its plugin failed
    UnsupportedError,  # a NotImplementedError; a kernel declined or LOOM_FALLBACK=error refused
    bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
)

# PyTorch's aliases.
half = float16
float = float32  # noqa: A001  (torch.float is float32)
double = float64
long = int64
int = int32  # noqa: A001
short = int16

from ._grad_mode import no_grad, enable_grad, set_grad_enabled  # noqa: E402
from . import _ops  # noqa: E402
from . import _tensor  # noqa: E402,F401  (Tensor methods written in Python)
from ._tensor import isclose, allclose, equal  # noqa: E402,F401
from ._C import from_numpy, from_dlpack  # noqa: E402,F401  (numpy and DLPack interop)
from . import autograd  # noqa: E402
from . import library  # noqa: E402,F401
from ._C import plugins, kernels, load_plugin, fallback_stats, set_fallback_policy  # noqa: E402,F401
from ._C import (  # noqa: E402,F401  (streams, events, device runtime: loom/stream.h)
    Stream, Event, DeviceProperties, current_stream, default_stream, set_stream, synchronize,
    device_properties, memory_stats, empty_cache, reset_peak_memory_stats, set_device_option,
    set_num_threads, get_num_threads,
)
from ._device_runtime import (  # noqa: E402,F401
    stream, memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved,
)

_ops.install(globals())
_tensor.install_method_functions(globals())
from ._C import stack  # noqa: E402,F401

from . import random  # noqa: E402
from .random import (  # noqa: E402,F401
    Generator, manual_seed, seed, initial_seed, default_generator, get_rng_state, set_rng_state,
)
from . import nn  # noqa: E402  (after install: nn calls catalog ops)
from . import optim, utils  # noqa: E402
from . import amp  # noqa: E402
from .amp import autocast  # noqa: E402,F401
from .amp.autocast_mode import is_autocast_enabled, get_autocast_dtype, set_autocast_enabled  # noqa: E402,F401
from . import backends, cuda, accelerator, profiler  # noqa: E402
from ._legacy_types import Size, typed_tensor_types as _typed_tensor_types  # noqa: E402
globals().update(_typed_tensor_types("cpu", "loom"))  # loom.FloatTensor, loom.LongTensor, ...
vars(cuda).update(_typed_tensor_types("cuda", "loom.cuda"))
from . import distributed, jit, onnx  # noqa: E402,F401
from .serialization import save, load  # noqa: E402



def __getattr__(name):
    # Ops defined after import (by a plugin loaded on first use of its
    # device, e.g. sim's sim_kernel_stream) appear on first access.
    _ops.install(globals())
    if name in globals():
        return globals()[name]
    raise AttributeError(f"module 'loom' has no attribute '{name}'")


__all__ = [n for n in dir() if not n.startswith("_")]
