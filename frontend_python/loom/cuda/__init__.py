"""loom.cuda: torch.cuda's names for the device type "cuda" (the CUDA plugin).

Without that plugin, or with no GPU, ``is_available()`` is False and
``device_count()`` 0, never an exception; like torch.cuda, the memory
figures are then 0 and ``empty_cache()`` does nothing, while everything that
needs a device raises a RuntimeError naming it.

loom has no per-thread current device: "cuda" always means cuda:0, so
``current_device()`` is 0 and there is no ``set_device``; pass an index or
"cuda:<i>" instead.
"""
from .. import _C
from .._device_runtime import stream  # noqa: F401  (torch.cuda.stream)

_TYPE = "cuda"

# torch.cuda.OutOfMemoryError; loom raises the same class for every device.
OutOfMemoryError = _C.OutOfMemoryError


def _device(device):
    """None -> cuda:0; an int i -> cuda:i; a str or loom.device as given."""
    if device is None:
        return _C.device(_TYPE)
    if isinstance(device, int):
        return _C.device(_TYPE, device)
    return _C.device(device) if isinstance(device, str) else device


def device_count():
    return _C._available_device_count(_TYPE)


def is_available():
    return device_count() > 0


def current_device():
    return 0


def synchronize(device=None):
    _C.synchronize(_device(device))


def get_device_properties(device=None):
    return _C.device_properties(_device(device))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


class Stream(_C.Stream):
    """torch.cuda.Stream: a new stream on a CUDA device (cuda:0 by default)."""

    def __init__(self, device=None, priority=0):
        super().__init__(_device(device))


class Event(_C.Event):
    """torch.cuda.Event: bound to the device of its first record; record()
    without a stream records on cuda:0's current stream."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        super().__init__(None, enable_timing)

    def record(self, stream=None):
        super().record(stream if stream is not None else current_stream(self.device))


def current_stream(device=None):
    return _C.current_stream(_device(device))


def default_stream(device=None):
    return _C.default_stream(_device(device))


def set_stream(stream):
    _C.set_stream(stream)


def memory_stats(device=None):
    """The allocator's figures as a dict; {} while no GPU is available."""
    return _C.memory_stats(_device(device)) if is_available() else {}


def memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes", 0)


def max_memory_allocated(device=None):
    return memory_stats(device).get("max_allocated_bytes", 0)


def memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("max_reserved_bytes", 0)


def empty_cache():
    """Gives every GPU's cached, unused blocks back to the driver."""
    for i in range(device_count()):
        _C.empty_cache(_device(i))


def reset_peak_memory_stats(device=None):
    _C.reset_peak_memory_stats(_device(device))


# ---------------------------------------------------------------- random numbers
# Each GPU has its own default generator (loom.random explains the streams).
# Like torch.cuda, these do nothing without a GPU, so CPU-only runs of GPU
# programs seed what they can and go on.

def _generator(device=None):
    return _C._default_generator(_device(device))


def manual_seed(seed):
    """Seeds the current GPU's (cuda:0's) default generator."""
    if is_available():
        _generator().manual_seed(seed)


def manual_seed_all(seed):
    for i in range(device_count()):
        _generator(i).manual_seed(seed)


def seed():
    if is_available():
        _generator().seed()


def seed_all():
    """One fresh non-deterministic seed for every GPU."""
    if is_available():
        manual_seed_all(_generator().seed())


def initial_seed():
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda"):
    _generator(device).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


class _DefaultGenerators:
    """torch.cuda.default_generators: a tuple-like of each GPU's default generator."""

    def __len__(self):
        return device_count()

    def __getitem__(self, i):
        if not 0 <= i < device_count():
            raise IndexError(f"cuda has {device_count()} devices; no device {i}")
        return _generator(i)

    def __iter__(self):
        return (self[i] for i in range(len(self)))


default_generators = _DefaultGenerators()


# ---------------------------------------------------------------- mixed precision (torch.cuda.amp)
from . import amp  # noqa: E402


def get_autocast_gpu_dtype():
    return _C._get_autocast_dtype(_TYPE)
