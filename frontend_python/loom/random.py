"""loom.random: seeding and RNG state, as torch.random.

Every device type has default generators (one per device); random ops not
given ``generator=`` draw from the one of their tensor's device. All are
Philox streams, so with equal seeds a tensor drawn on any device equals the
CPU's. An unseeded process starts each from a fresh non-deterministic seed,
as PyTorch does; ``manual_seed(s)`` seeds every device's, including devices
first used afterwards.

The state is 16 bytes (the seed and the counter offset, little-endian), not
PyTorch's 5056-byte Mersenne-Twister state: a state saved by PyTorch cannot
be restored here, and the reverse.
"""
import contextlib

from . import _C
from ._C import Generator, manual_seed, seed, initial_seed  # noqa: F401

default_generator = _C._default_generator("cpu")


def get_rng_state():
    """The CPU default generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cuda"):
    """Restores the CPU's (and the given devices') RNG state on exit (torch.random.fork_rng).
    devices: indices of `device_type` devices; None means every available one."""
    if not enabled:
        yield
        return
    if devices is None:
        devices = range(_C._available_device_count(device_type))
    gens = [default_generator] + [_C._default_generator(_C.device(device_type, int(d))) for d in devices]
    states = [g.get_state() for g in gens]
    try:
        yield
    finally:
        for g, s in zip(gens, states):
            g.set_state(s)
