"""Sequential, ModuleList, ModuleDict."""
import collections
import collections.abc
import operator

from ..module import Module


def _index(idx, size, kind):
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range for {kind} of length {size}")
    return idx % size


def _renumber(container, modules):
    """Registers ``modules`` under "0", "1", ...: PyTorch keeps a container's indices contiguous."""
    container._modules.clear()
    for i, m in enumerate(modules):
        container.add_module(str(i), m)


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    ``Sequential(m1, m2, ...)`` names them "0", "1", ...; ``Sequential(OrderedDict(...))`` keeps the names.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(collections.OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules.keys())[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules.keys())
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]):
            delattr(self, key)
        _renumber(self, list(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        modules = list(self._modules.values())
        modules.insert(index, module)
        _renumber(self, modules)
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered (so parameters() sees them) but not called in any order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx, module):
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_index(idx, len(self), "ModuleList")))
        _renumber(self, list(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

    def insert(self, index, module):
        modules = list(self._modules.values())
        modules.insert(index, module)
        _renumber(self, modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if isinstance(modules, (Module, str)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def pop(self, key=-1):
        v = self[key]
        del self[key]
        return v

    def __repr__(self):
        # PyTorch prints every child (it compresses repeats; we keep the plain form).
        return super().__repr__()


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, collections.abc.Mapping):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if not isinstance(m, (list, tuple)) or len(m) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} should be a (key, module) pair")
                self[m[0]] = m[1]
