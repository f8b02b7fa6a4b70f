"""Random calls of every catalog op with random arguments: each must return or raise a Python
exception, never crash the interpreter (a crash fails the whole pytest run)."""
import random

import pytest

import loom

DTYPES = [loom.float32, loom.float64, loom.int64, loom.int32, loom.bool, loom.float16, loom.bfloat16, loom.uint8]
EXPECTED = (TypeError, RuntimeError, ValueError, IndexError, OverflowError, NotImplementedError)


def random_tensor(rng):
    shape = [rng.choice([0, 1, 2, 3]) for _ in range(rng.choice([0, 1, 2, 3, 4]))]
    t = (loom.randn(*shape) * 3).to(rng.choice(DTYPES))
    if rng.random() < 0.2 and t.ndim >= 2:
        t = t.transpose(0, 1)
    if rng.random() < 0.1 and t.is_floating_point():
        t = t.detach().requires_grad_()
    return t


def random_arg(rng):
    r = rng.random()
    if r < 0.45:
        return random_tensor(rng)
    if r < 0.6:
        return rng.choice([0, 1, -1, 2, 5, -7, 100])
    if r < 0.7:
        return rng.choice([0.5, -1.5, 1e30, float("nan"), float("inf")])
    if r < 0.75:
        return None
    if r < 0.8:
        return rng.choice([True, False])
    if r < 0.9:
        return [rng.choice([0, 1, -1, 2, 3]) for _ in range(rng.choice([0, 1, 2, 3]))]
    if r < 0.95:
        return rng.choice(["mean", "sum", "none", "reflect", "tanh", "floor", ""])
    return [random_tensor(rng) for _ in range(rng.choice([1, 2]))]


@pytest.mark.parametrize("seed", range(4))
def test_random_op_calls_raise_python_errors_or_succeed(seed):
    rng = random.Random(seed)
    names = sorted({name for name, *_ in loom._C._ops()})
    for _ in range(750):
        name = rng.choice(names)
        args = [random_arg(rng) for _ in range(rng.choice([1, 2, 3, 4, 5]))]
        if rng.random() < 0.7:
            args[0] = random_tensor(rng)
        try:
            r = getattr(loom, name)(*args)
            if isinstance(r, loom.Tensor) and r.requires_grad and r.numel() and r.is_floating_point():
                r.sum().backward()
        except EXPECTED:
            pass
