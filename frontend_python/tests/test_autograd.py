"""Autograd from Python: grad mode, hooks, grad(), custom Functions, gradcheck, errors."""
import pytest

import loom


def leaf(values):
    return loom.tensor(values, dtype=loom.float64, requires_grad=True)


def test_no_grad_and_enable_grad_as_context_managers_and_decorators():
    x = leaf([1.0, 2.0])
    with loom.no_grad():
        assert not (x * 2).requires_grad
        with loom.enable_grad():
            assert (x * 2).requires_grad

    @loom.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    assert (x * 2).requires_grad
    with loom.set_grad_enabled(False):
        assert not loom.is_grad_enabled()
    assert loom.is_grad_enabled()


def test_hooks_and_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    handle = y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert y.grad.tolist() == [10.0, 10.0]
    assert x.grad.tolist() == [30.0, 30.0]
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_grad_and_double_backward():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = loom.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 12.0, 27.0]
    (gg,) = loom.autograd.grad(g.sum(), x)
    assert gg.tolist() == [6.0, 12.0, 18.0]
    assert x.grad is None


class Cube(loom.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x * ctx.scale, None


def test_custom_function_forward_backward_and_gradcheck():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x, 2.0)
    assert y.grad_fn.name() == "CubeBackward"
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 24.0]
    assert loom.autograd.gradcheck(lambda t: Cube.apply(t, 0.5), (loom.randn(3, dtype=loom.float64, requires_grad=True),))


def test_gradcheck_reports_a_wrong_gradient():
    class Wrong(loom.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    x = loom.randn(2, dtype=loom.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        loom.autograd.gradcheck(Wrong.apply, (x,))
    assert not loom.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


def test_autograd_errors_are_python_exceptions():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="leaf"):
        x.add_(1)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_matches_torch_gradients_on_a_small_network():
    torch = pytest.importorskip("torch", reason="PyTorch is the gradient oracle")
    import numpy as np
    rng = np.random.default_rng(0)
    w1, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    lw, lx = loom.tensor(w1, requires_grad=True), loom.tensor(x)
    tw, tx = torch.tensor(w1, requires_grad=True), torch.tensor(x)
    (loom.log_softmax(lx @ lw.T, 1).sum() * 2).backward()
    (torch.log_softmax(tx @ tw.T, 1).sum() * 2).backward()
    np.testing.assert_allclose(np.array(lw.grad.tolist()), tw.grad.numpy(), rtol=1e-10, atol=1e-12)
