"""DataLoader: batches of a dataset in a (shuffled) order, as torch.utils.data.DataLoader.

Loading always runs in the calling process: ``num_workers``, ``timeout``,
``worker_init_fn``, ``prefetch_factor`` and ``persistent_workers`` are accepted for
compatibility and do nothing. ``pin_memory=True`` puts every batch tensor in page-locked host
memory of ``pin_memory_device``'s type (default ``cuda``), so that
``batch.to("cuda", non_blocking=True)`` overlaps the copy with compute; without such a device it
warns once and leaves batches as they are, as PyTorch does.
"""
import warnings

from ... import _C
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    """Iterates over `dataset` in batches of `batch_size` (``None``: single samples, no collation).

    shuffle: a new random order every epoch (reproducible with ``generator`` — an int seed or a
    random.Random — or with loom.manual_seed); drop_last: skip a last, incomplete batch;
    collate_fn: turns a list of samples into a batch (default: default_collate).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers=False, pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset = dataset
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self._pin_type = None
        if pin_memory:
            pin_type = _C.device(pin_memory_device).type if pin_memory_device else "cuda"
            if _C._available_device_count(pin_type) > 0:
                self._pin_type = pin_type
            else:
                warnings.warn("'pin_memory' argument is set as true but no {} device is available, so "
                              "pinned memory won't be used.".format(pin_type))
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = generator

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 "shuffle={}".format(shuffle))
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 "sampler={}".format(sampler))
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 "but got batch_sampler={}".format(batch_sampler))
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                                 "drop_last")
        elif isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got batch_size={}"
                             .format(batch_size))

        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if auto_collation else default_convert
        self.collate_fn = collate_fn
        self._auto_collation = auto_collation

    def __iter__(self):
        if self._iterable:
            batches = self._iter_iterable()
        elif not self._auto_collation:
            batches = (self.collate_fn(self.dataset[i]) for i in self.sampler)
        else:
            batches = self._iter_batches()
        if self._pin_type is None:
            return batches
        return (_pin(batch, self._pin_type) for batch in batches)

    def _iter_batches(self):
        dataset, collate_fn = self.dataset, self.collate_fn
        # A TensorDataset batch with the default collation is one index_select per tensor
        # instead of one select per sample and a stack.
        fast = type(dataset) is TensorDataset and collate_fn is default_collate
        for indices in self.batch_sampler:
            if fast:
                yield _tensor_dataset_batch(dataset, indices)
            else:
                yield collate_fn([dataset[i] for i in indices])

    def _iter_iterable(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


def _pin(data, device_type):
    """Pins every CPU tensor inside a batch (tuples, lists, dicts, namedtuples), as torch's
    pin_memory does; anything else is left alone."""
    if isinstance(data, _C.Tensor):
        return data.pin_memory(device_type) if data.device.type == "cpu" else data
    if isinstance(data, dict):
        return type(data)((k, _pin(v, device_type)) for k, v in data.items())
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin(v, device_type) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(v, device_type) for v in data)
    return data


def _tensor_dataset_batch(dataset, indices):
    n = len(dataset)
    for i in indices:
        if not -n <= i < n:
            raise IndexError("index {} is out of bounds for dimension 0 with size {}".format(i, n))
    out = []
    index = None
    for t in dataset.tensors:
        if index is None or index.device != t.device:
            index = _C.tensor([i % n for i in indices], dtype=_C.int64, device=t.device)
        out.append(t.index_select(0, index))
    return out
