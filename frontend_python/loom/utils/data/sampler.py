"""Samplers: the order (and batches) of dataset indices a DataLoader visits."""
from . import _random


class Sampler:
    """Iterates over dataset indices."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order (a new one every epoch); with replacement, `num_samples` random draws.

    ``generator`` (int seed or random.Random) makes the sequence of orders reproducible;
    without one, each epoch's order is drawn from loom's global RNG (see loom.manual_seed).
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        self._rng = _random.make_rng(generator)
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got replacement={}".format(replacement))
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got num_samples={}"
                             .format(self.num_samples))

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        # Lazy, as PyTorch's generator: minGPT's trainer asks for num_samples=int(1e10) draws with
        # replacement and takes only the batches it trains on, so nothing is drawn before it is asked for.
        n = len(self.data_source)
        rng = _random.rng_or_fresh(self._rng)
        if self.replacement:
            for _ in range(self.num_samples):
                yield rng.randrange(n)
            return
        for cycle in range(-(-self.num_samples // n)):  # whole permutations, the last one cut short
            perm = list(range(n))
            rng.shuffle(perm)
            yield from perm[:self.num_samples - cycle * n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator
        self._rng = _random.make_rng(generator)

    def __iter__(self):
        return iter([self.indices[i] for i in _random.randperm(len(self.indices), self._rng)])

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of `batch_size` (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got batch_size={}"
                             .format(batch_size))
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got drop_last={}".format(drop_last))
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class DistributedSampler(Sampler):
    """This rank's share of a dataset for data-parallel training (PyTorch's DistributedSampler).

    Every epoch the same order on every rank — shuffled from ``seed + epoch`` (call
    ``set_epoch`` before each epoch), or in order — padded by repeating its start so it
    divides evenly (or cut, with ``drop_last``), then rank ``r`` takes elements ``r``,
    ``r + num_replicas``, ... num_replicas and rank default to loom.distributed's world.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        import math
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: give num_replicas and rank, or call "
                                   "loom.distributed.init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1 or not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedSampler: invalid rank {rank} for num_replicas {num_replicas}, "
                             f"rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        import random
        n = len(self.dataset)
        indices = list(range(n))
        if self.shuffle:
            random.Random(self.seed + self.epoch).shuffle(indices)
        if not self.drop_last:
            padding = self.total_size - len(indices)
            while padding > 0:
                indices += indices[:padding]
                padding = self.total_size - len(indices)
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples
