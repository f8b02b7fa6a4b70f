"""Tensor methods written in Python (thin wrappers over _C)."""
from . import _C

Tensor = _C.Tensor


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates this tensor's gradient into the .grad of the leaves (see loom.autograd.backward)."""
    from . import autograd
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


class RemovableHandle:
    """Returned by register_hook; ``handle.remove()`` takes the hook off."""

    def __init__(self, tensor, hook_id):
        self._tensor, self._id = tensor, hook_id

    def remove(self):
        if self._tensor is not None:
            self._tensor._remove_hook(self._id)
            self._tensor = None


def register_hook(self, hook):
    """``hook(grad)`` runs when this tensor's gradient is computed; it may return a replacement."""
    return RemovableHandle(self, self._register_hook(hook))


Tensor.backward = backward
Tensor.register_hook = register_hook



# torch.<name>(t, ...) for the Tensor methods that are views or list ops
# rather than catalog ops (the catalog's are module functions already).
_METHOD_FUNCTIONS = ("reshape", "transpose", "t", "permute", "unsqueeze", "squeeze", "flatten", "unflatten",
                     "movedim", "narrow", "select", "split", "chunk", "unbind", "tile", "argsort", "detach",
                     "clone", "numel", "addcmul", "addcdiv")


def _method_function(name):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"loom.{name}(t, ...) is t.{name}(...)"
    return fn


def install_method_functions(namespace):
    for name in _METHOD_FUNCTIONS:
        namespace.setdefault(name, _method_function(name))
    for name, full, binary in (("max", "amax", "maximum"), ("min", "amin", "minimum")):
        fn = _extremum(namespace[name], namespace[full], namespace[binary], name)
        namespace[name] = fn
        setattr(Tensor, name, fn)


def _extremum(by_dim, full, binary, name):
    """torch.max's three forms: max(t) (a 0-d tensor), max(t, dim) (values, indices), max(t, other)."""
    def fn(input, dim=None, keepdim=False):
        if dim is None:
            return full(input, [])
        if isinstance(dim, Tensor):
            return binary(input, dim)
        return by_dim(input, dim, keepdim)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _extremum.__doc__.replace("max", name)
    return fn


def _rebuild_tensor(data, dtype_name, shape, requires_grad):
    import numpy as np
    from . import _C
    t = _C.tensor(np.frombuffer(data, dtype=np.dtype(dtype_name)).reshape(shape)) if dtype_name != "bfloat16" else \
        _C.tensor(np.frombuffer(data, dtype=np.float32).reshape(shape)).to(_C.bfloat16)
    return t.requires_grad_() if requires_grad else t


def __reduce_ex__(self, protocol):
    """Pickles the values (on the CPU), dtype, shape and requires_grad; not the graph."""
    t = self.detach().cpu().contiguous()
    name = repr(t.dtype)[5:]
    if name == "bfloat16":
        t = t.float()
    arr = t.numpy()
    return (_rebuild_tensor, (arr.tobytes(), arr.dtype.str if name != "bfloat16" else "bfloat16", tuple(t.shape),
                              self.requires_grad and self.is_leaf))


def __deepcopy__(self, memo):
    """A copy of the values outside the graph, keeping the subclass (nn.Parameter) and requires_grad."""
    if id(self) in memo:
        return memo[id(self)]
    with _no_grad():
        copy = self.clone()
    if type(self) is not Tensor:
        copy = Tensor._make_subclass(type(self), copy, self.requires_grad)
    elif self.requires_grad and self.is_leaf:
        copy.requires_grad_()
    if self.grad is not None:
        copy.grad = self.grad.clone()
    memo[id(self)] = copy
    return copy


def _no_grad():
    from ._grad_mode import no_grad
    return no_grad()


Tensor.__reduce_ex__ = __reduce_ex__
Tensor.__deepcopy__ = __deepcopy__


# --- PyTorch conveniences real programs reach for ----------------------------

def __format__(self, spec):
    """f"{loss:.4f}" formats a one-element tensor's value, as PyTorch; a bare {t} is str(t)."""
    if self.dim() == 0:
        return self.item().__format__(spec)
    if spec == "":
        return str(self)
    raise TypeError(f"unsupported format string passed to Tensor.__format__: a {self.dim()}-d tensor takes none")


# torch.FloatTensor-style names, for Tensor.type() with no argument.
_LEGACY_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                      "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                      "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _dtype_name(dtype):
    return repr(dtype).split(".")[-1]


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """t.type() names the tensor type ('loom.FloatTensor', 'loom.cuda.FloatTensor'); t.type(dtype) is
    t.to(dtype), also for names such as 'torch.LongTensor'."""
    if dtype is None:
        device = "" if self.device.type == "cpu" else self.device.type + "."
        return f"loom.{device}{_LEGACY_TYPE_NAMES[_dtype_name(self.dtype)]}"
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        by_name = {v: k for k, v in _LEGACY_TYPE_NAMES.items()}
        short = dtype.split(".")[-1]
        if short not in by_name:
            raise ValueError(f"invalid type: '{dtype}'")
        on_cuda = ".cuda." in dtype
        out = self.to(_C._dtype_from_name(by_name[short]))
        return out.to("cuda") if on_cuda else out
    return self.to(dtype)


def _new_options(self, dtype, device, requires_grad):
    return dict(dtype=self.dtype if dtype is None else dtype, device=self.device if device is None else device,
                requires_grad=requires_grad)


def _sizes(size):
    return tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
    return _C.zeros(_sizes(size), **_new_options(self, dtype, device, requires_grad))


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
    return _C.ones(_sizes(size), **_new_options(self, dtype, device, requires_grad))


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
    return _C.empty(_sizes(size), **_new_options(self, dtype, device, requires_grad))


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kwargs):
    return _C.full(list(_sizes((size,))), fill_value, **_new_options(self, dtype, device, requires_grad))


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kwargs):
    """A copy of `data` with this tensor's dtype and device unless given (torch.Tensor.new_tensor)."""
    if isinstance(data, Tensor):
        data = data.detach()
    return _C.tensor(data, **_new_options(self, dtype, device, requires_grad))


def addcmul(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 * tensor2."""
    return self + value * (tensor1 * tensor2) if value != 1 else self + tensor1 * tensor2


def addcmul_(self, tensor1, tensor2, *, value=1):
    return self.add_(tensor1 * tensor2, alpha=value)


def addcdiv(self, tensor1, tensor2, *, value=1):
    """self + value * tensor1 / tensor2."""
    return self + value * (tensor1 / tensor2) if value != 1 else self + tensor1 / tensor2


def addcdiv_(self, tensor1, tensor2, *, value=1):
    return self.add_(tensor1 / tensor2, alpha=value)


def zero_(self):
    """Fills self with zeros, in place (C++ Tensor::zero_, fill_ with 0)."""
    return self.fill_(0)


for _name, _fn in (("__format__", __format__), ("type", tensor_type), ("new_zeros", new_zeros), ("new_ones", new_ones),
                   ("new_empty", new_empty), ("new_full", new_full), ("new_tensor", new_tensor),
                   ("addcmul", addcmul), ("addcmul_", addcmul_), ("addcdiv", addcdiv), ("addcdiv_", addcdiv_),
                   ("zero_", zero_)):
    setattr(Tensor, _name, _fn)


# ---- closeness and equality (torch.isclose / allclose / equal) -----------------------

def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |self - other| <= atol + rtol * |other| (equal infinities
    are close; NaN only with equal_nan), as torch.isclose."""
    from . import _C as C
    if not isinstance(other, Tensor):
        other = C.tensor(other, dtype=self.dtype, device=self.device)
    if self.dtype == C.bool or other.dtype == C.bool:
        return self == other
    a, b = (self.double(), other.double()) if self.dtype != other.dtype else (self, other)
    close = (a == b) | ((a - b).abs() <= atol + rtol * b.abs())
    if equal_nan:
        close = close | (a.isnan() & b.isnan())
    return close


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (isclose), as torch.allclose."""
    return bool(isclose(self, other, rtol, atol, equal_nan).all().item())


def equal(self, other):
    """Same shape and the same values, as torch.equal."""
    return tuple(self.shape) == tuple(other.shape) and bool((self == other).all().item())


Tensor.isclose = isclose
Tensor.allclose = allclose
Tensor.equal = equal
