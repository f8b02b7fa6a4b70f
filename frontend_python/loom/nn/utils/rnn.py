"""Packed sequences, as torch.nn.utils.rnn: a batch of sequences of different lengths as one tensor
of their time steps' rows, longest sequence first, with batch_sizes[t] rows at step t.

pack and unpack are one index_select / index_add each (differentiable), not a loop over steps.
"""
import collections

import loom as _loom


class PackedSequence(collections.namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                                "unsorted_indices"])):
    """data [sum(batch_sizes), *]; batch_sizes (int64 CPU tensor) rows per step; sorted_indices /
    unsorted_indices: the batch order by decreasing length and its inverse (None when given sorted)."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    @property
    def is_cuda(self):
        return self.data.device.type == "cuda"

    def is_pinned(self):
        return False


def _invert(perm):
    out = _loom.empty_like(perm)
    out[perm] = _loom.arange(perm.numel(), device=perm.device)
    return out


def _lengths_list(lengths):
    if isinstance(lengths, _loom.Tensor):
        if lengths.dim() != 1:
            raise ValueError(f"lengths must be a 1-d tensor, got shape {tuple(lengths.shape)}")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _step_rows(lengths_sorted, batch):
    """For time-major padded data viewed as [T*N, *]: the row of each packed element, and batch_sizes."""
    T = lengths_sorted[0] if lengths_sorted else 0
    batch_sizes, rows = [], []
    for t in range(T):
        b = sum(1 for n in lengths_sorted if n > t)
        batch_sizes.append(b)
        rows.extend(t * batch + i for i in range(b))
    return batch_sizes, rows


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, N, *] ([N, T, *] with batch_first) of sequences of the given lengths."""
    lengths = _lengths_list(lengths)
    if enforce_sorted:
        if any(lengths[i] < lengths[i + 1] for i in range(len(lengths) - 1)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = list(range(len(lengths)))
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        sorted_indices = _loom.tensor(order, dtype=_loom.int64, device=input.device)
    if any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    T, N = input.shape[0], input.shape[1]
    if len(lengths) != N:
        raise ValueError(f"pack_padded_sequence: {len(lengths)} lengths for a batch of {N}")
    if max(lengths) > T:
        raise ValueError(f"pack_padded_sequence: a length of {max(lengths)} is longer than the {T} padded steps")
    if sorted_indices is not None:
        input = input.index_select(1, sorted_indices)
    batch_sizes, rows = _step_rows([lengths[i] for i in order], N)
    flat = input.reshape(T * N, *input.shape[2:])
    data = flat.index_select(0, _loom.tensor(rows, dtype=_loom.int64, device=input.device))
    return PackedSequence(data, _loom.tensor(batch_sizes, dtype=_loom.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch [T, N, *] ([N, T, *] with batch_first) and the lengths (int64 CPU tensor)."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    T, N = len(batch_sizes), batch_sizes[0]
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence ({T}), "
                             f"but got total_length={total_length}")
        T_out = total_length
    else:
        T_out = T
    lengths = [sum(1 for b in batch_sizes if b > i) for i in range(N)]
    _, rows = _step_rows(lengths, N)
    idx = _loom.tensor(rows, dtype=_loom.int64, device=data.device)
    out = _loom.zeros(T_out * N, *data.shape[1:], dtype=data.dtype, device=data.device).index_add(0, idx, data)
    if padding_value != 0:
        filled = _loom.zeros(T_out * N, dtype=_loom.bool, device=data.device)
        filled[idx] = True
        pad = filled.logical_not().reshape(T_out * N, *([1] * (data.dim() - 1)))
        out = _loom.where(pad, _loom.full([], padding_value, dtype=data.dtype, device=data.device), out)
    out = out.reshape(T_out, N, *data.shape[1:])
    lengths_t = _loom.tensor(lengths, dtype=_loom.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t.index_select(0, sequence.unsorted_indices.cpu())
    return (out.transpose(0, 1) if batch_first else out), lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors [L_i, *] into [max L, N, *] (or [N, max L, *]), padding with padding_value."""
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = longest - s.shape[0]
        if extra:
            fill = _loom.full([extra, *s.shape[1:]], padding_value, dtype=s.dtype, device=s.device)
            s = _loom.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return _loom.stack(padded, 1 if not batch_first else 0)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors [L_i, *] (longest first unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
