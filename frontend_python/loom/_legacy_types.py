"""PyTorch's legacy spellings of shapes and typed tensors: loom.Size, loom.FloatTensor, ...

    loom.Size([2, 3])                    # a tuple of ints with numel(); equal to x.shape
    loom.LongTensor([1, 2])              # loom.tensor([1, 2], dtype=loom.int64)
    loom.FloatTensor(2, 3)               # an uninitialised float32 tensor of that size
    isinstance(x, loom.FloatTensor)      # x is a float32 CPU tensor
    loom.cuda.FloatTensor(...)           # the same on "cuda"

The typed names are not classes of their own: calling one builds an ordinary loom.Tensor, and
isinstance asks the tensor's dtype and device, which is what PyTorch's answers mean.
"""
from . import _C


class Size(tuple):
    """A tensor's shape (PyTorch's torch.Size). loom's x.shape is a plain tuple, which compares
    equal to a Size of the same ints."""

    def __new__(cls, sizes=()):
        sizes = tuple(sizes)
        for s in sizes:
            if not isinstance(s, int) or isinstance(s, bool):
                raise TypeError(f"loom.Size() takes an iterable of ints, got a {type(s).__name__}")
        return super().__new__(cls, sizes)

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"loom.Size({list(self)})"

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item


class _TypedTensorMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _C.Tensor) and obj.dtype == cls.dtype and obj.device.type == cls.device_type

    def __call__(cls, *args):
        import loom
        if len(args) == 0:
            return loom.empty(0, dtype=cls.dtype, device=cls.device_type)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return loom.empty(args, dtype=cls.dtype, device=cls.device_type)
        if len(args) == 1 and isinstance(args[0], (tuple, Size)) and all(isinstance(a, int) for a in args[0]):
            return loom.empty(tuple(args[0]), dtype=cls.dtype, device=cls.device_type)
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}() takes sizes (ints) or one sequence of data, got {len(args)} arguments")
        data = args[0]
        if isinstance(data, _C.Tensor):
            return data.to(dtype=cls.dtype, device=cls.device_type)
        return loom.tensor(data, dtype=cls.dtype, device=cls.device_type)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


_NAMES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
          "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
          "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}


def typed_tensor_types(device_type, module):
    """The legacy typed-tensor names for one device type, as attributes of `module`'s namespace."""
    return {name: _TypedTensorMeta(name, (), {"dtype": getattr(_C, dtype), "device_type": device_type,
                                              "__module__": module})
            for name, dtype in _NAMES.items()}
