"""loom.accelerator: the machine's accelerator, device-type neutral (torch.accelerator).

The accelerator is the first device type, other than the CPU, that has a
device: "cuda" when the CUDA plugin sees a GPU, else a plugin's (hip, a
third party's). loom has no per-thread current device, so the current index
is always 0.
"""
from . import _C

# Device types that are hosts, not accelerators (the CPU, and the "sim" test
# device that runs on host memory).
_HOST_TYPES = ("cpu", "sim")
_PREFERRED = ("cuda", "hip")


def _types():
    names = [p.get("device_types", []) for p in _C.plugins()]
    seen = [t for types in names for t in types]
    ordered = [t for t in _PREFERRED if t in seen] + [t for t in seen if t not in _PREFERRED]
    return [t for t in ordered if t not in _HOST_TYPES]


def current_accelerator(check_available=False):
    """A loom.device of the accelerator type, or None when the machine has none."""
    for t in _types():
        if _C._available_device_count(t) > 0:
            return _C.device(t)
    return None


def is_available():
    return current_accelerator() is not None


def device_count():
    acc = current_accelerator()
    return _C._available_device_count(acc.type) if acc is not None else 0


def current_device_index():
    return 0


current_device_idx = current_device_index


def set_device_index(device):
    index = device if isinstance(device, int) else _C.device(device).index if isinstance(device, str) else device.index
    if index not in (0, None, -1):
        raise RuntimeError(f"loom has no per-thread current device: pass devices explicitly ('cuda:{index}')")


set_device_idx = set_device_index


def synchronize(device=None):
    acc = current_accelerator()
    if device is None:
        if acc is None:
            return
        device = acc
    _C.synchronize(_C.device(device) if isinstance(device, str) else device)
