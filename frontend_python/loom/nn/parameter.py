"""nn.Parameter: a Tensor that a Module registers as one of its parameters."""
from .. import _C

Tensor = _C.Tensor


class Parameter(Tensor):
    """A Tensor subclass that, assigned as a Module attribute, joins ``parameters()``.

    Shares ``data``'s memory (like PyTorch); ``requires_grad`` defaults to True.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, got {type(data).__name__}")
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        # __new__ did the work; Tensor.__init__ must not run again with these arguments.
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        # Pickles as data + flag; the data's own pickling is Tensor's business.
        return (Parameter, (self.detach(), self.requires_grad))
