"""Tensor.__getitem__ / __setitem__ / __iter__ / __contains__: numpy as the
reference for values, PyTorch 1.13 for the rules numpy does not share (lists
read as tuples, bool scalars, 0-d integer tensors)."""
import numpy as np
import pytest

import loom

try:
    import torch
except ImportError:  # the oracle tests skip, with the reason, without it
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (python3-torch) is not installed")


def arange(*shape):
    n = int(np.prod(shape)) if shape else 1
    a = np.arange(n, dtype=np.float32).reshape(shape)
    return a, loom.tensor(a)


# Each index as numpy reads it, on a (4, 5, 6) array.
BASIC_INDICES = [
    0, -1, (1, 2), (1, 2, 3), (-4, -5, -6),
    slice(None), slice(1, 3), slice(None, None, 2), slice(-3, None), slice(1, 100), slice(5, 1),
    (slice(None), 1), (slice(None), slice(None, None, 3), -2), (Ellipsis, 1), (1, Ellipsis),
    (1, Ellipsis, 2), Ellipsis, None, (None, 1), (1, None, slice(1, 3), None), (Ellipsis, None),
    (slice(None, None, 2), None, Ellipsis, slice(1, None, 4)),
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_indexing_matches_numpy_and_is_a_view(index):
    a, t = arange(4, 5, 6)
    r = t[index]
    np.testing.assert_array_equal(r.numpy(), a[index])
    assert r.shape == a[index].shape
    if r.numel():
        r.fill_(-7.0)  # a view writes through
        a[index] = -7.0
        np.testing.assert_array_equal(t.numpy(), a)


ADVANCED_INDICES = [
    [0, 2],
    [[0, 1], [2, 3]],
    np.array([3, 0, 0]),
    (np.array([0, 1]), np.array([2, 3])),
    (slice(None), np.array([0, 4])),
    (np.array([[0], [3]]), slice(1, 3), np.array([1, 5])),  # separated: broadcast dims go first
    (np.array([1, 2]), Ellipsis),
    (Ellipsis, np.array([-1, 0])),
    (None, np.array([1, 2]), None),
    np.array([True, False, True, False]),
    (slice(None), np.array([True, False, True, False, True])),
    np.ones((4, 5), dtype=bool),
    (np.array([0, 3]), np.array([[1], [2]]), np.array([0, 5])),
    np.array([], dtype=np.int64),
]


@pytest.mark.parametrize("index", ADVANCED_INDICES, ids=repr)
def test_advanced_indexing_matches_numpy(index):
    a, t = arange(4, 5, 6)
    np_index = index
    lm_index = tuple(loom.tensor(i) if isinstance(i, np.ndarray) else i for i in index) \
        if isinstance(index, tuple) else (loom.tensor(index) if isinstance(index, np.ndarray) else index)
    expected = a[tuple(np_index) if isinstance(np_index, list) and any(isinstance(i, list) for i in np_index)
                 else np_index]
    r = t[lm_index]
    assert r.shape == expected.shape
    np.testing.assert_array_equal(r.numpy(), expected)
    # Advanced indexing copies: writing the result leaves t alone.
    if r.numel():
        r.fill_(-1.0)
        np.testing.assert_array_equal(t.numpy(), a)


def test_numpy_arrays_as_indices():
    a, t = arange(4, 5)
    np.testing.assert_array_equal(t[np.array([1, 3])].numpy(), a[[1, 3]])
    np.testing.assert_array_equal(t[np.array([True, False, True, True])].numpy(), a[[True, False, True, True]])
    assert t[np.int64(2), np.int32(1)].item() == a[2, 1]


def test_int_and_uint8_index_dtypes():
    a, t = arange(5)
    assert t[loom.tensor([4, 0], dtype=loom.int32)].tolist() == [4.0, 0.0]
    assert t[loom.tensor([1, 0, 0, 1, 1], dtype=loom.uint8)].tolist() == [0.0, 3.0, 4.0]
    assert t[loom.tensor([1, 2], dtype=loom.int16)].tolist() == [1.0, 2.0]


SET_CASES = [
    (1, 5.0),
    ((slice(None), 2), np.float32(9)),
    ((Ellipsis, slice(1, 4, 2)), np.arange(2, dtype=np.float32)),
    (np.array([0, 3]), np.arange(30, dtype=np.float32).reshape(5, 6)),
    ((np.array([0, 1]), np.array([2, 3])), np.array([[10.0], [20.0]], dtype=np.float32)),
    ((slice(None), np.array([0, 4]), 1), -3.0),
    (np.array([True, False, True, False]), 1.5),
    ((np.array([[0], [3]]), slice(1, 3), np.array([1, 5])), 7.0),
    (np.array([], dtype=np.int64), 4.0),
    (np.zeros((4, 5), dtype=bool), 4.0),
]


@pytest.mark.parametrize("index,value", SET_CASES, ids=repr)
def test_setitem_matches_numpy(index, value):
    a, t = arange(4, 5, 6)
    lm_index = tuple(loom.tensor(i) if isinstance(i, np.ndarray) else i for i in index) \
        if isinstance(index, tuple) else (loom.tensor(index) if isinstance(index, np.ndarray) else index)
    lm_value = loom.tensor(value) if isinstance(value, np.ndarray) else value
    a[index] = value
    t[lm_index] = lm_value
    np.testing.assert_array_equal(t.numpy(), a)


def test_setitem_casts_values_and_accepts_lists():
    t = loom.zeros(3, dtype=loom.int64)
    t[0] = 2.7  # truncates, as a copy into int64 does
    t[1:] = loom.tensor([5.0, 6.0], dtype=loom.float64)
    assert t.tolist() == [2, 5, 6]
    t[[0, 2]] = [8, 9]
    assert t.tolist() == [8, 5, 9]
    m = loom.zeros(2, 3)
    m[0] = loom.tensor([1.0, 2.0, 3.0])
    m[:, 1] = np.array([7.0, 8.0], dtype=np.float32)
    assert m.tolist() == [[1.0, 7.0, 3.0], [0.0, 8.0, 0.0]]


def test_per_sample_loop_and_iteration():
    a, t = arange(3, 2)
    rows = [r.tolist() for r in t]
    assert rows == a.tolist()
    assert [float(x) for x in t[:, 0]] == [0.0, 2.0, 4.0]
    assert len(list(iter(loom.zeros(0, 3)))) == 0
    with pytest.raises(TypeError, match="0-d"):
        iter(loom.tensor(1.0))


def test_contains():
    t = loom.tensor([[1, 2], [3, 4]])
    assert 3 in t and 5 not in t
    assert loom.tensor(4) in t
    with pytest.raises(TypeError, match="in <loom.Tensor>"):
        "a" in t  # noqa: B015


def test_bad_indices_raise_named_errors():
    _, t = arange(2, 3)
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 2"):
        t[2]
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 3"):
        t[0, -4]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        t[..., 0, ...]
    with pytest.raises(IndexError, match="valid indices .got float"):
        t[1.5]
    with pytest.raises(IndexError, match="valid indices .got str"):
        t["a"]
    with pytest.raises(IndexError, match="must be long, int, byte or bool tensors .got float32"):
        t[loom.tensor([0.0])]
    with pytest.raises(IndexError, match="out of bounds"):
        t[loom.tensor([0, 5])]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        t[::-1]
    with pytest.raises(IndexError, match="0-dim"):
        loom.tensor(1.0)[0]
    with pytest.raises(RuntimeError, match="mask"):
        t[loom.tensor([True, False, True])]
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        t[loom.tensor([0, 1])] = loom.zeros(3, 2)
    with pytest.raises(TypeError, match="item deletion"):
        del t[0]
    with pytest.raises(TypeError, match="can't assign a object"):
        t[0] = object()


def test_indexing_is_differentiable():
    x = loom.arange(12.0).reshape(3, 4).requires_grad_()
    y = x[1:, ::2].sum() + (x[[0, 2], [1, 3]] * 2).sum() + x[x > 9].sum()
    y.backward()
    expected = np.zeros((3, 4), dtype=np.float32)
    expected[1:, ::2] += 1
    expected[[0, 2], [1, 3]] += 2
    expected[np.arange(12).reshape(3, 4) > 9] += 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_setitem_on_a_non_leaf_records_the_write():
    w = loom.ones(4, requires_grad=True)
    h = w * 3
    h[1:3] = loom.tensor([0.0, 5.0])
    h.sum().backward()
    assert w.grad.tolist() == [3.0, 0.0, 0.0, 3.0]


def test_setitem_on_a_leaf_that_requires_grad_is_refused():
    w = loom.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        w[0] = 2.0
    # A leaf that is itself a view of a tensor that does not require grad.
    v = loom.arange(12.0).reshape(3, 4).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        v[0] = 1.0
    with loom.no_grad():
        v[0] = 1.0
    assert v[0].tolist() == [1.0] * 4


@needs_torch
@pytest.mark.parametrize("index", [
    [0, slice(1, 2)],          # a list holding a slice reads as a tuple
    [[0, 1], [1, 2]],          # a list of lists reads as a tuple of index lists
    True, False, (0, True), (Ellipsis, False, 1),
    "tensor0d",
    (1, slice(None), [0, 3, 2]),  # the int is a select, not an advanced index (numpy differs)
], ids=repr)
def test_pytorch_only_rules(index):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    if index == "tensor0d":
        lm, th = loom.tensor(1), torch.tensor(1)
    else:
        lm = th = index
    expected = torch.from_numpy(a)[th]
    r = loom.tensor(a)[lm]
    assert r.shape == tuple(expected.shape)
    np.testing.assert_array_equal(r.numpy(), expected.numpy())


@needs_torch
def test_gradients_match_torch_for_mixed_indices():
    a = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float64)
    idx = (np.array([[0], [2]]), slice(None, None, 2), np.array([4, 1, 0]))
    x = loom.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    w = np.arange(2 * 3 * 2, dtype=np.float64).reshape(2, 3, 2)
    (x[tuple(loom.tensor(i) if isinstance(i, np.ndarray) else i for i in idx)] * loom.tensor(w)).sum().backward()
    (xt[tuple(torch.tensor(i) if isinstance(i, np.ndarray) else i for i in idx)] * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy())
