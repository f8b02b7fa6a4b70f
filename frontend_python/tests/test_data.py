"""loom.utils.data: datasets, samplers, DataLoader and default_collate (numpy as the oracle)."""
import collections
import random

import numpy as np
import pytest

import loom
from loom.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                             SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, default_collate,
                             default_convert, random_split)

X = np.arange(30, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64) * 7


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": loom.tensor([float(i), float(i * i)]), "i": i, "name": "s{}".format(i), "w": 0.5 * i}


def test_tensor_dataset_indexing():
    ds = TensorDataset(loom.tensor(X), loom.tensor(Y))
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == X[3].tolist() and y.item() == 21
    assert ds[-1][1].item() == 63
    assert ds[2:5][0].tolist() == X[2:5].tolist()
    assert ds[[4, 1]][1].tolist() == [28, 7]
    with pytest.raises(IndexError, match="out of bounds"):
        ds[10]
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(loom.zeros(3, 2), loom.zeros(4))


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False), (4, True)])
def test_dataloader_batches_a_tensor_dataset(batch_size, drop_last):
    loader = DataLoader(TensorDataset(loom.tensor(X), loom.tensor(Y)), batch_size=batch_size, drop_last=drop_last)
    batches = list(loader)
    expected = len(X) // batch_size if drop_last else -(-len(X) // batch_size)
    assert len(loader) == len(batches) == expected
    xs = np.concatenate([b[0].numpy() for b in batches])
    ys = np.concatenate([b[1].numpy() for b in batches])
    n = expected * batch_size if drop_last else len(X)
    np.testing.assert_array_equal(xs, X[:n])
    np.testing.assert_array_equal(ys, Y[:n])
    assert isinstance(batches[0], list) and batches[0][1].dtype is loom.int64


def test_fast_tensor_dataset_path_equals_collating_samples():
    ds = TensorDataset(loom.tensor(X), loom.tensor(Y))
    fast = list(DataLoader(ds, batch_size=4, shuffle=True, generator=3))
    slow = list(DataLoader(ds, batch_size=4, shuffle=True, generator=3, collate_fn=lambda b: default_collate(b)))
    assert [[t.tolist() for t in b] for b in fast] == [[t.tolist() for t in b] for b in slow]


def test_shuffle_is_a_permutation_and_reproducible():
    ds = TensorDataset(loom.tensor(Y))
    epoch = lambda loader: [v for (b,) in loader for v in b.tolist()]  # noqa: E731
    a = DataLoader(ds, batch_size=3, shuffle=True, generator=123)
    b = DataLoader(ds, batch_size=3, shuffle=True, generator=123)
    a1, a2 = epoch(a), epoch(a)
    assert sorted(a1) == sorted(Y.tolist()) and a1 != Y.tolist()
    assert a1 != a2  # a new order every epoch...
    assert [a1, a2] == [epoch(b), epoch(b)]  # ...and the same sequence of orders for the same seed
    c = DataLoader(ds, batch_size=3, shuffle=True, generator=random.Random(123))
    assert epoch(c) == a1
    # Without a generator, loom.manual_seed makes the order reproducible.
    loom.manual_seed(7)
    d1 = epoch(DataLoader(ds, batch_size=5, shuffle=True))
    loom.manual_seed(7)
    assert epoch(DataLoader(ds, batch_size=5, shuffle=True)) == d1


def test_default_collate_structures():
    batch = default_collate([Squares(4)[i] for i in range(3)])
    assert set(batch) == {"x", "i", "name", "w"}
    assert batch["x"].tolist() == [[0, 0], [1, 1], [2, 4]]
    assert batch["i"].tolist() == [0, 1, 2] and batch["i"].dtype is loom.int64
    assert batch["w"].dtype is loom.float64 and batch["w"].tolist() == [0.0, 0.5, 1.0]
    assert batch["name"] == ["s0", "s1", "s2"]
    Point = collections.namedtuple("Point", "x y")
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.x.tolist() == [1, 3] and p.y.tolist() == [2.0, 4.0]
    t = default_collate([(1, [True, 2]), (2, [False, 3])])
    assert isinstance(t, list) and t[0].tolist() == [1, 2]
    assert isinstance(t[1], list) and t[1][0].dtype is loom.bool and t[1][1].tolist() == [2, 3]
    s = default_collate([loom.tensor(1.5), loom.tensor(2.5)])
    assert s.shape == (2,) and s.tolist() == [1.5, 2.5]
    n = default_collate([np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)])
    assert n.shape == (2, 2, 2) and n.dtype is loom.float32
    assert default_collate([np.int16(3), np.int16(4)]).dtype is loom.int16
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([loom.zeros(2), loom.zeros(3)])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])


def test_default_collate_keeps_the_graph():
    a = loom.tensor([1.0, 2.0], requires_grad=True)
    s = default_collate([a * 2, a * 3])
    s.sum().backward()
    assert a.grad.tolist() == [5.0, 5.0]


def test_dataloader_on_a_map_dataset_with_custom_collate():
    loader = DataLoader(Squares(5), batch_size=2)
    batches = list(loader)
    assert len(loader) == 3 and batches[2]["x"].shape == (1, 2) and batches[1]["i"].tolist() == [2, 3]
    loader = DataLoader(Squares(5), batch_size=2, collate_fn=lambda b: [s["i"] for s in b])
    assert list(loader) == [[0, 1], [2, 3], [4]]


def test_batch_size_none_gives_samples_converted():
    class Arrays(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.full(3, i, np.float32), i

    items = list(DataLoader(Arrays(), batch_size=None))
    assert isinstance(items[1], list) and items[1][0].tolist() == [1.0, 1.0, 1.0] and items[1][1] == 1
    assert default_convert({"a": np.zeros(2)})["a"].dtype is loom.float64


def test_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    r = list(RandomSampler(range(6), generator=1))
    assert sorted(r) == list(range(6))
    assert len(list(RandomSampler(range(6), replacement=True, num_samples=20, generator=1))) == 20
    assert len(list(RandomSampler(range(3), num_samples=7, generator=1))) == 7
    assert sorted(list(RandomSampler(range(3), num_samples=7, generator=1))[:6]) == [0, 0, 1, 1, 2, 2]


def test_random_sampler_draws_lazily():
    # minGPT's trainer: an "endless" sampler with replacement, of which it takes a few batches.
    ds = TensorDataset(loom.arange(10))
    sampler = RandomSampler(ds, replacement=True, num_samples=int(1e10), generator=3)
    assert len(sampler) == int(1e10)
    it = iter(DataLoader(ds, sampler=sampler, batch_size=4))
    batches = [next(it)[0].tolist() for _ in range(3)]
    assert all(len(b) == 4 and all(0 <= v < 10 for v in b) for b in batches)
    without = iter(RandomSampler(range(5), num_samples=int(1e10), generator=3))
    assert sorted(next(without) for _ in range(5)) == [0, 1, 2, 3, 4]
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=2)) == [5, 7, 9]
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2
    loader = DataLoader(Squares(7), batch_sampler=bs, collate_fn=lambda b: [s["i"] for s in b])
    assert list(loader) == [[0, 1, 2], [3, 4, 5], [6]]
    loader = DataLoader(Squares(4), sampler=[3, 0], batch_size=2)
    assert next(iter(loader))["i"].tolist() == [3, 0]


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        DataLoader(Stream(), shuffle=True)


def test_random_split_subset_concat():
    ds = TensorDataset(loom.tensor(Y))
    a, b = random_split(ds, [7, 3], generator=0)
    assert len(a) == 7 and len(b) == 3 and isinstance(a, Subset)
    values = sorted([a[i][0].item() for i in range(7)] + [b[i][0].item() for i in range(3)])
    assert values == Y.tolist()
    assert [s.indices for s in random_split(ds, [7, 3], generator=0)] == [a.indices, b.indices]
    parts = random_split(range(10), [0.5, 0.3, 0.2], generator=1)
    assert [len(p) for p in parts] == [5, 3, 2]
    assert [len(p) for p in random_split(range(11), [0.5, 0.5], generator=1)] == [6, 5]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [5, 4])
    cat = ConcatDataset([range(3), range(10, 12)])
    assert len(cat) == 5 and [cat[i] for i in range(5)] == [0, 1, 2, 10, 11] and cat[-1] == 11


def test_dataloader_argument_errors():
    ds = TensorDataset(loom.tensor(Y))
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(TypeError, match="generator must be"):
        DataLoader(ds, shuffle=True, generator="seed")


def test_matches_torch_dataloader_batches():
    torch = pytest.importorskip("torch", reason="torch.utils.data as the oracle")
    ours = list(DataLoader(Squares(5), batch_size=2, drop_last=False))

    class TorchSquares(torch.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": torch.tensor([float(i), float(i * i)]), "i": i, "name": "s{}".format(i), "w": 0.5 * i}

    theirs = list(torch.utils.data.DataLoader(TorchSquares(), batch_size=2))
    for a, b in zip(ours, theirs):
        assert a["x"].tolist() == b["x"].tolist() and a["i"].tolist() == b["i"].tolist()
        assert a["name"] == b["name"] and a["w"].tolist() == b["w"].tolist()
        assert repr(a["w"].dtype)[5:] == repr(b["w"].dtype)[6:]
