"""Seeding as PyTorch does it: fresh seeds per process, manual_seed on every device, Generator objects
for generator=, RNG state save/restore, and multinomial / randperm."""
import os
import subprocess
import sys

import pytest

import loom


def _draw_in_fresh_process():
    code = "import loom; print(loom.initial_seed(), loom.rand(3).tolist())"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=dict(os.environ)).stdout


def test_an_unseeded_process_draws_a_fresh_seed():
    assert _draw_in_fresh_process() != _draw_in_fresh_process()


def test_manual_seed_reproduces_and_returns_the_default_generator():
    g = loom.manual_seed(123)
    assert isinstance(g, loom.Generator) and g == loom.default_generator
    a = loom.randn(5)
    loom.manual_seed(123)
    assert loom.randn(5).tolist() == a.tolist()
    assert loom.initial_seed() == 123
    loom.manual_seed(-1)  # negative seeds wrap modulo 2**64, as PyTorch's
    assert loom.initial_seed() == 2 ** 64 - 1
    with pytest.raises(RuntimeError, match="Overflow"):
        loom.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        loom.manual_seed(1.5)


def test_seed_reseeds_nondeterministically():
    s = loom.seed()
    assert loom.initial_seed() == s
    assert loom.seed() != s


def test_generator_objects_are_independent_streams():
    g1 = loom.Generator().manual_seed(7)
    g2 = loom.Generator()
    assert g2.initial_seed() == 67280421310721  # PyTorch's seed for a new Generator
    g2.manual_seed(7)
    a = loom.rand(4, generator=g1)
    loom.manual_seed(0)
    loom.rand(10)  # the default stream moving does not touch g2
    assert loom.rand(4, generator=g2).tolist() == a.tolist()
    assert g1.device == loom.device("cpu")


def test_every_random_factory_and_op_takes_a_generator():
    def draws(seed):
        g = loom.Generator().manual_seed(seed)
        t = loom.empty(6)
        return [loom.rand(3, generator=g).tolist(), loom.randn(2, 2, generator=g).tolist(),
                loom.randint(0, 10, (5,), generator=g).tolist(), loom.randperm(7, generator=g).tolist(),
                t.uniform_(0, 1, generator=g).tolist(), t.normal_(0, 1, generator=g).tolist(),
                loom.multinomial(loom.ones(5), 3, generator=g).tolist(),
                loom.rand_like(t, generator=g).tolist()]
    assert draws(5) == draws(5)
    assert draws(5) != draws(6)


def test_rng_state_round_trips():
    loom.manual_seed(9)
    state = loom.get_rng_state()
    assert state.dtype is loom.uint8 and tuple(state.shape) == (16,)
    a = loom.rand(3)
    loom.set_rng_state(state)
    assert loom.rand(3).tolist() == a.tolist()
    with pytest.raises(RuntimeError, match="16 bytes"):
        loom.set_rng_state(loom.zeros(4, dtype=loom.uint8))
    g = loom.Generator()
    saved = g.get_state()
    b = loom.rand(2, generator=g)
    assert g.set_state(saved) is not None
    assert loom.rand(2, generator=g).tolist() == b.tolist()


def test_fork_rng_restores_the_state():
    loom.manual_seed(3)
    with loom.random.fork_rng():
        loom.rand(100)
    after = loom.rand(2)
    loom.manual_seed(3)
    assert loom.rand(2).tolist() == after.tolist()


def test_cuda_seeding_is_a_no_op_without_a_gpu():
    if loom.cuda.is_available():
        pytest.skip("a GPU is present; test_cuda covers it")
    loom.cuda.manual_seed(1)
    loom.cuda.manual_seed_all(1)
    loom.cuda.seed_all()
    assert loom.cuda.get_rng_state_all() == []
    assert len(loom.cuda.default_generators) == 0


def test_a_generator_of_another_device_type_is_refused():
    g = loom.Generator("sim")
    with pytest.raises(RuntimeError, match="generator of device type 'cpu'"):
        loom.rand(3, generator=g)
    assert loom.rand(3, device="sim", generator=g).device == loom.device("sim")
    with pytest.raises(TypeError, match="Generator"):
        loom.rand(3, generator=5)


def test_draws_equal_on_every_device_with_equal_seeds():
    loom.manual_seed(11)
    cpu = loom.rand(50)
    loom.manual_seed(11)
    assert loom.rand(50, device="sim").cpu().tolist() == cpu.tolist()


def test_randperm_is_a_permutation():
    p = loom.randperm(1000)
    assert sorted(p.tolist()) == list(range(1000)) and p.dtype is loom.int64
    assert loom.randperm(0).tolist() == []
    assert loom.randperm(5, dtype=loom.int32).dtype is loom.int32
    with pytest.raises(RuntimeError, match="do not fit"):
        loom.randperm(300, dtype=loom.int8)


def test_multinomial_distribution_and_rules():
    loom.manual_seed(0)
    probs = loom.tensor([0.1, 0.0, 0.6, 0.3])
    draws = loom.multinomial(probs, 20000, replacement=True)
    counts = [int((draws == i).sum().item()) for i in range(4)]
    assert counts[1] == 0
    for c, p in zip(counts, [0.1, 0.0, 0.6, 0.3]):
        assert abs(c / 20000 - p) < 0.015
    rows = loom.multinomial(loom.tensor([[1.0, 0, 0], [0, 0, 5.0]]), 4, True)
    assert rows.tolist() == [[0] * 4, [2] * 4]
    picks = loom.multinomial(loom.ones(10), 10)
    assert sorted(picks.tolist()) == list(range(10))  # without replacement: each once
    assert probs.multinomial(1).shape == (1,)
    with pytest.raises(RuntimeError, match="without replacement"):
        loom.multinomial(loom.ones(3), 4)
    with pytest.raises(RuntimeError, match="not enough non-negative category"):
        loom.multinomial(loom.tensor([1.0, 0, 0]), 2)
    with pytest.raises(RuntimeError, match="inf"):
        loom.multinomial(loom.tensor([1.0, -1.0]), 1)
    with pytest.raises(RuntimeError, match="sum of probabilities"):
        loom.multinomial(loom.zeros(2, 3), 1, True)
    with pytest.raises(RuntimeError, match="1 or 2 dim"):
        loom.multinomial(loom.ones(2, 2, 2), 1)


def test_dataloader_shuffles_with_a_loom_generator():
    from loom.utils.data import DataLoader
    data = list(range(20))
    order = lambda seed: [int(b) for batch in DataLoader(data, batch_size=5, shuffle=True,
                                                         generator=loom.Generator().manual_seed(seed))
                          for b in batch]
    assert order(1) == order(1) and sorted(order(1)) == data and order(1) != order(2)
