"""Streams, events and allocator statistics for any device type (the names
torch.cuda has, without the device type baked in; ``loom.cuda`` adds that).

    s = loom.Stream("sim")
    with loom.stream(s):              # ops and copies on "sim" run on s
        y = x + x
    loom.memory_allocated("sim")      # bytes held by tensors there

A device whose plugin lacks a capability raises a RuntimeError naming the
device and what is missing.
"""
import contextlib

from . import _C


@contextlib.contextmanager
def stream(s):
    """Makes ``s`` the current stream of its device inside the block and
    restores the previous one after; ``None`` changes nothing."""
    if s is None:
        yield
        return
    previous = _C.current_stream(s.device)
    _C.set_stream(s)
    try:
        yield s
    finally:
        _C.set_stream(previous)


def memory_allocated(device):
    """Bytes the device's allocator has handed to tensors now."""
    return _C.memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device):
    """Peak of memory_allocated since the last reset_peak_memory_stats."""
    return _C.memory_stats(device)["max_allocated_bytes"]


def memory_reserved(device):
    """Bytes the allocator holds from the device (tensors plus its cache)."""
    return _C.memory_stats(device)["reserved_bytes"]


def max_memory_reserved(device):
    """Peak of memory_reserved since the last reset_peak_memory_stats."""
    return _C.memory_stats(device)["max_reserved_bytes"]
