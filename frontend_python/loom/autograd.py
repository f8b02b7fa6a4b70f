"""loom.autograd: backward, grad, gradcheck, custom Functions."""
from . import _C
from ._grad_mode import no_grad, enable_grad, set_grad_enabled  # noqa: F401

Tensor = _C.Tensor


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates d(sum of tensors * grad_tensors)/d(leaf) into each leaf's .grad."""
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported yet; use loom.autograd.grad")
    _C._backward(_as_tuple(tensors), _as_tuple(grad_tensors), retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    """The gradients of outputs with respect to inputs, without touching .grad."""
    return _C._grad(_as_tuple(outputs), _as_tuple(inputs), _as_tuple(grad_outputs), retain_graph,
                    create_graph, allow_unused)


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Finite differences against backward, in float64 (see loom::autograd::gradcheck)."""
    try:
        return _C._gradcheck(func, _as_tuple(inputs), eps, atol, rtol)
    except RuntimeError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """gradcheck of the gradients themselves (double backward)."""
    try:
        return _C._gradgradcheck(func, _as_tuple(inputs), eps, atol, rtol)
    except RuntimeError:
        if raise_exception:
            raise
        return False
