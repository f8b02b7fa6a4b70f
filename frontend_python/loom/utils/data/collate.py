"""default_collate (samples -> batch) and default_convert (numpy -> tensors), as torch.utils.data."""
import collections.abc
import sys

from ... import _C

Tensor = _C.Tensor

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _stack(tensors):
    """loom.stack(tensors, 0), built from cat when loom has no stack."""
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.shape != first.shape:
            raise RuntimeError("stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}"
                               .format(list(first.shape), list(t.shape), i))
    loom = sys.modules[__name__.split(".")[0]]
    stack = getattr(loom, "stack", None)
    if stack is not None:
        return stack(tensors, 0)
    if first.ndim > 0:
        # Two ops for the whole batch: join along dim 0, then split that dim back apart.
        return loom.cat(list(tensors), 0).view(len(tensors), *first.shape)
    if not any(t.requires_grad for t in tensors):
        return _C.tensor([t.item() for t in tensors], dtype=first.dtype, device=first.device)
    return loom.cat([t.reshape(1) for t in tensors], 0)


def _is_numpy(obj):
    return type(obj).__module__ == "numpy"


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors and numpy arrays are stacked on a new dim 0,
    floats become a float64 tensor, ints (and bools) an int64 (bool) tensor, strings stay a list,
    and dicts / tuples / lists are collated field by field (tuples come back as lists, as in PyTorch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack(batch)
    if _is_numpy(elem) and type(elem).__name__ not in ("str_", "bytes_"):
        if type(elem).__name__ in ("ndarray", "memmap"):
            if elem.dtype.char in "SaUO":
                raise TypeError(_ERR.format(elem.dtype))
            return default_collate([_C.tensor(b) for b in batch])
        if elem.shape == ():  # a numpy scalar
            return _C.tensor(sys.modules["numpy"].array(batch))
    if isinstance(elem, float):
        return _C.tensor(batch, dtype=_C.float64)
    if isinstance(elem, int):
        return _C.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [default_collate(list(samples)) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            return transposed
        try:
            return type(elem)(transposed)
        except TypeError:
            return transposed
    raise TypeError(_ERR.format(type(elem)))


def default_convert(data):
    """Turns numpy arrays (also inside dicts / tuples / lists) into tensors; leaves the rest as is."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if type(data).__name__ in ("ndarray", "memmap") and data.dtype.char not in "SaUO":
            return _C.tensor(data)
        if getattr(data, "shape", None) == () and type(data).__name__ not in ("str_", "bytes_"):
            return _C.tensor(data)
        return data
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(data[key]) for key in data}
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        converted = [default_convert(d) for d in data]
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    return data
