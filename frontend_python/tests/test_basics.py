"""First checks of the Python frontend: factories, operators, ops from the catalog, autograd."""
import numpy as np
import pytest

import loom


def test_tensor_from_nested_lists_infers_dtype_like_pytorch():
    assert loom.tensor([1, 2, 3]).dtype is loom.int64
    assert loom.tensor([1.0, 2]).dtype is loom.float32
    assert loom.tensor([True, False]).dtype is loom.bool
    assert loom.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert loom.tensor(3.5).shape == ()
    with pytest.raises(ValueError, match="length"):
        loom.tensor([[1, 2], [3]])


def test_tensor_from_python_floats_rounds_once_to_the_requested_dtype():
    assert loom.tensor([0.1], dtype=loom.float64).tolist() == [0.1]  # not float32's 0.10000000149
    assert loom.tensor(0.1, dtype=loom.float64).item() == 0.1
    assert loom.tensor([0.1]).tolist() == [float(np.float32(0.1))]
    assert loom.tensor([2.7, -2.7], dtype=loom.int64).tolist() == [2, -2]  # truncation, as PyTorch
    assert loom.tensor([16777217], dtype=loom.float64).tolist() == [16777217.0]


def test_operators_match_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.linspace(1, 2, 3, dtype=np.float32)
    ta, tb = loom.tensor(a), loom.tensor(b)
    np.testing.assert_allclose((ta + tb).tolist(), a + b)
    np.testing.assert_allclose((2 - ta).tolist(), 2 - a)
    np.testing.assert_allclose((ta / tb).tolist(), a / b, rtol=1e-6)
    np.testing.assert_allclose((ta @ ta.T).tolist(), a @ a.T)
    assert (ta > 2).tolist() == (a > 2).tolist()
    c = ta.clone()
    c += 1
    np.testing.assert_allclose(c.tolist(), a + 1)


def test_catalog_ops_are_functions_and_methods():
    x = loom.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert loom.sum(x, 1).tolist() == [6.0, 5.0]
    assert x.sum(dim=0, keepdim=True).shape == (1, 2)
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 3.0] and indices.tolist() == [1, 0]
    assert loom.cat([x, x], 0).shape == (4, 2)
    with pytest.raises(TypeError, match="sum\\(\\) received an invalid combination of arguments"):
        loom.sum(x, "a")


def test_errors_become_python_exceptions_with_the_message():
    with pytest.raises(RuntimeError, match="matmul"):
        loom.ones(2, 3) @ loom.ones(2, 3)


def test_autograd_from_python():
    x = loom.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    assert y.grad_fn.name() == "SumBackward0"
    y.backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    with loom.no_grad():
        assert not (x * 2).requires_grad
    (g,) = loom.autograd.grad((x ** 3).sum(), x)
    assert g.tolist() == [3.0, 12.0, 27.0]


def test_max_min_forms_copy_pickle_and_data_swap():
    import copy
    import pickle
    x = loom.tensor([[1.0, 5.0], [3.0, 2.0]], requires_grad=True)
    assert loom.max(x).item() == 5.0 and x.min().item() == 1.0
    assert x.max(1).indices.tolist() == [1, 0]
    assert loom.max(x, loom.full((2, 2), 4.0)).tolist() == [[4.0, 5.0], [4.0, 4.0]]
    y = copy.deepcopy(x)
    assert y is not x and y.tolist() == x.tolist() and y.requires_grad
    z = pickle.loads(pickle.dumps(x))
    assert z.tolist() == x.tolist() and z.dtype is x.dtype
    p = loom.nn.Parameter(loom.ones(2))
    p.data = loom.zeros(2)
    assert p.tolist() == [0.0, 0.0] and p.requires_grad and isinstance(p, loom.nn.Parameter)


def test_direct_catalog_calls_apply_string_defaults_and_dropout_modes():
    x = loom.ones(4)
    assert loom.dropout(x, 0.5, False).tolist() == [1.0] * 4
    assert loom.dropout(x, 1.0, True).tolist() == [0.0] * 4
    assert loom.gelu(loom.zeros(2)).tolist() == [0.0, 0.0]  # approximate='none' by default


def test_zero_fills_in_place_views_included():
    t = loom.arange(6, dtype=loom.float32).reshape(2, 3)
    view = t[1]
    assert view.zero_() is view
    assert t.tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]]
    g = loom.ones(2, 2, dtype=loom.int64).zero_()
    assert g.dtype == loom.int64 and g.tolist() == [[0, 0], [0, 0]]
