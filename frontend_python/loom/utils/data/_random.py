"""Random orders for samplers and random_split.

A ``generator`` here is a loom.Generator (as in PyTorch), an int seed or a
``random.Random``; ``None`` draws a seed from loom's default CPU generator, so
that ``loom.manual_seed(s)`` makes shuffling reproducible as ``torch.manual_seed`` does.
"""
import random

from ... import _C


def make_rng(generator):
    """A random.Random for `generator` (None: None, drawn from loom's RNG at each use)."""
    if generator is None or isinstance(generator, random.Random):
        return generator
    if isinstance(generator, int) and not isinstance(generator, bool):
        return random.Random(generator)
    if isinstance(generator, _C.Generator):  # one draw from it seeds the order's stream
        return random.Random(int(_C.randint(0, 2 ** 62, (), generator=generator).item()))
    seed = getattr(generator, "initial_seed", None)
    if callable(seed):  # a torch-style Generator object
        return random.Random(int(seed()))
    raise TypeError("generator must be None, a loom.Generator, an int seed or a random.Random, but got "
                    + type(generator).__name__)


def rng_or_fresh(rng):
    if rng is not None:
        return rng
    return random.Random(int(_C.randint(0, 2 ** 62, ()).item()))


def randperm(n, rng):
    """A random permutation of range(n) as a list."""
    order = list(range(n))
    rng_or_fresh(rng).shuffle(order)
    return order
