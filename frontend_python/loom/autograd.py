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


class FunctionCtx:
    """The ``ctx`` a Function's forward and backward share."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()
        self._non_differentiable = set()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)


class Function:
    """A differentiable operation with a hand-written backward, as torch.autograd.Function:

        class Exp(loom.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                (y,) = ctx.saved_tensors
                return grad * y

        y = Exp.apply(x)

    forward runs without recording; backward returns one gradient per
    forward argument (None for non-tensors or no gradient).
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function must define backward(ctx, ...)")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            result = cls.forward(ctx, *args)
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        inputs = [a for a in args if isinstance(a, Tensor)]
        # An input handed back unchanged gets its own handle, so recording
        # the function's history on it leaves the input's alone.
        input_ids = {id(a) for a in inputs}
        outputs = tuple(o.detach() if isinstance(o, Tensor) and id(o) in input_ids else o for o in outputs)
        differentiable = [o for o in outputs if isinstance(o, Tensor) and id(o) not in ctx._non_differentiable]
        if _C.is_grad_enabled() and any(t.requires_grad for t in inputs) and differentiable:
            # A saved output is kept without its history: holding it whole
            # would be a cycle (output -> node -> ctx -> output) that Python's
            # collector cannot see through the C++ node.
            out_ids = {id(o) for o in differentiable}
            ctx.saved_tensors = tuple(t.detach() if isinstance(t, Tensor) and id(t) in out_ids else t
                                      for t in ctx.saved_tensors)
            positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]

            def backward_fn(*grads):
                res = cls.backward(ctx, *grads)
                res = res if isinstance(res, tuple) else (res,)
                if len(res) != len(args):
                    raise RuntimeError(f"{cls.__name__}.backward returned {len(res)} gradients but forward took "
                                       f"{len(args)} arguments")
                return tuple(res[i] for i in positions)

            _C._record_function(cls.__name__ + "Backward", inputs, differentiable, backward_fn)
        return outputs[0] if single else outputs
