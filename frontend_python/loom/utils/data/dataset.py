"""Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset and random_split."""
import bisect
import math
import warnings

from ... import _C
from . import _random

Tensor = _C.Tensor


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


def take(tensor, index):
    """tensor[index] along dim 0 (loom.Tensor has no __getitem__ yet): int, slice or index list."""
    if isinstance(index, int) and not isinstance(index, bool):
        n = tensor.shape[0]
        if not -n <= index < n:
            raise IndexError("index {} is out of bounds for dimension 0 with size {}".format(index, n))
        return tensor.select(0, index)
    if isinstance(index, slice):
        start, stop, step = index.indices(tensor.shape[0])
        if step == 1:
            return tensor.narrow(0, start, max(0, stop - start))
        index = list(range(start, stop, step))
    if isinstance(index, Tensor):
        return tensor.index_select(0, index.long().reshape(-1))
    if isinstance(index, (list, tuple)):
        return tensor.index_select(0, _C.tensor(list(index), dtype=_C.int64, device=tensor.device))
    raise TypeError("TensorDataset index must be an int, slice, list or Tensor, but got " + type(index).__name__)


class TensorDataset(Dataset):
    """Sample i is ``tuple(t[i] for t in tensors)``; every tensor has the same first dimension."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError("TensorDataset takes Tensors, but got " + type(t).__name__)
            if t.ndim == 0:
                raise ValueError("TensorDataset tensors need a first dimension, but got a 0-d tensor")
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors: first dimensions are "
                             + str([t.shape[0] for t in tensors]))
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(take(t, index) for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


def random_split(dataset, lengths, generator=None):
    """Splits `dataset` into non-overlapping random Subsets of the given lengths (or fractions summing to 1)."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError("Fraction at index {} is not between 0 and 1".format(i))
            sizes.append(int(math.floor(n * frac)))
        for i in range(n - sum(sizes)):  # the remainder, round-robin as PyTorch does
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn("Length of split at index {} is 0. This might result in an empty dataset.".format(i))
        lengths = sizes
    if any(length < 0 for length in lengths):
        raise ValueError("random_split lengths must be non-negative, but got " + str(lengths))
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _random.randperm(n, _random.make_rng(generator))
    subsets, offset = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[offset:offset + length]))
        offset += length
    return subsets
