"""nn.Module: the base class of layers and models (PyTorch's mechanics, in loom)."""
import collections
import collections.abc
import itertools

from .. import _C
from .._grad_mode import no_grad
from .parameter import Parameter

Tensor = _C.Tensor


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns; reads like PyTorch's when nothing is off."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


class _RemovableHandle:
    """Returned by register_*_hook; ``remove()`` takes the hook off."""
    _next_id = itertools.count()

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = next(_RemovableHandle._next_id)

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(hooks, hook):
    handle = _RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


def _parse_to(args, kwargs):
    """(device, dtype, non_blocking) from Module.to's PyTorch-style arguments."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword argument(s) {sorted(kwargs)}")
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, _C.device)):
            device = a
        elif isinstance(a, bool):
            non_blocking = a
        else:
            raise TypeError(f"to() received an invalid argument {a!r}; expected a device, dtype or Tensor")
    if dtype is not None and not dtype.is_floating_point:
        raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
    return device, dtype, non_blocking


class Module:
    """Base class for all neural network modules.

    Parameters, buffers and submodules assigned as attributes are registered
    (in ``_parameters``, ``_buffers``, ``_modules``) so that ``parameters()``,
    ``state_dict()``, ``to()``... reach them.
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        # object.__setattr__: our own __setattr__ needs these dicts to exist.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "_forward_hooks", collections.OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", collections.OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def _call_impl(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        result = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            hook_result = hook(self, args, result)
            if hook_result is not None:
                result = hook_result
        return result

    __call__ = _call_impl

    def register_forward_pre_hook(self, hook):
        """``hook(module, args)`` runs before forward; it may return replacement args."""
        return _add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """``hook(module, args, output)`` runs after forward; it may return a replacement output."""
        return _add_hook(self._forward_hooks, hook)

    # ------------------------------------------------------------ registration

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not a parameter (e.g. running_mean); in state_dict if persistent."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds ``param`` (a Parameter or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly. To express '" + name + "' as a function of another Tensor, "
                             "compute the value in the forward() method.")
        else:
            self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module under ``name`` (also ``self.name = module``)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ("" is self)."""
        mod = self
        for item in target.split(".") if target else []:
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        return self._get_registered(target, "_parameters", "parameter")

    def get_buffer(self, target):
        return self._get_registered(target, "_buffers", "buffer")

    def _get_registered(self, target, registry, kind):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        entries = getattr(mod, registry)
        if name not in entries:
            raise AttributeError(f"{mod._get_name()} has no {kind} `{name}`")
        return entries[name]

    # ------------------------------------------------------------ attributes

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the registries.
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                        "(Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(registry, {}):
                del self.__dict__[registry][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self))
        keys += list(self._parameters) + list(self._buffers) + list(self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ------------------------------------------------------------ traversal

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ------------------------------------------------------------ modes, grads

    def train(self, mode=True):
        """Sets training mode on this module and its descendants (Dropout, BatchNorm care)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Sets every parameter's .grad to None (default) or to zeros."""
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            elif g.grad_fn is not None:
                # A grad with history (create_graph=True): replace rather than write into the graph.
                p.grad = _C.zeros_like(g)
            else:
                with no_grad():
                    g.fill_(0)

    def apply(self, fn):
        """Calls ``fn`` on every submodule (children first) and on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------ conversions

    def _apply(self, fn):
        """Applies ``fn`` to every parameter, gradient and buffer.

        loom cannot swap a Parameter's storage in place (no ``param.data = ...``), so a
        parameter that fn actually changes is replaced by a new Parameter under the same
        name; one that fn leaves as it is (same memory, dtype and device) keeps its identity.
        """
        for module in self.children():
            module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if _same_tensor(applied, param):
                new_param = param
            else:
                new_param = Parameter(applied, param.requires_grad)
            g = param.grad
            if g is not None:
                with no_grad():
                    g_applied = fn(g)
                new_param.grad = g if _same_tensor(g_applied, g) else g_applied
            self._parameters[key] = new_param
        for key, buf in self._buffers.items():
            if buf is not None:
                applied = fn(buf)
                if not _same_tensor(applied, buf):
                    self._buffers[key] = applied
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)``. Only floating-point tensors change dtype (like PyTorch)."""
        device, dtype, _ = _parse_to(args, dict(kwargs))

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(device, dtype) if device is not None else t.to(dtype)
            return t.to(device) if device is not None else t
        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self.to("cuda" if device is None else (device if isinstance(device, str) and ":" in device
                                                      else _C.device("cuda", int(device))))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # ------------------------------------------------------------ state dict

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer, by dotted name (detached)."""
        if args:  # PyTorch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = collections.OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected Tensor-like object '
                                  f"from checkpoint but received {type(input_param)}")
                continue
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{_size_str(input_param.shape)} from checkpoint, the shape in current model "
                                  f"is {_size_str(param.shape)}.")
                continue
            try:
                with no_grad():
                    param.copy_(input_param)
            except Exception as ex:  # noqa: BLE001  (reported with the key, as PyTorch does)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                  f"are {_size_str(param.shape)} and whose dimensions in the checkpoint are "
                                  f"{_size_str(input_param.shape)}, an exception occurred : {ex.args}.")
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    # A key for a child module is checked by that child.
                    if input_name[0] not in self._modules and input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        """Copies ``state_dict``'s tensors into this module's parameters and buffers.

        With ``strict``, missing and unexpected keys are errors; a shape mismatch is always one.
        Returns ``(missing_keys, unexpected_keys)``.
        """
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []

        def load(module, prefix=""):
            module._load_from_state_dict(state_dict, prefix, {}, True, missing_keys, unexpected_keys,
                                         error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
        load(self)

        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self._get_name(), "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------ repr

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses in repr (subclasses override)."""
        return ""

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str


def _same_tensor(a, b):
    return a is b or (a.data_ptr() == b.data_ptr() and a.dtype == b.dtype and a.device == b.device
                      and tuple(a.shape) == tuple(b.shape) and tuple(a.stride()) == tuple(b.stride()))


def _size_str(shape):
    return str(tuple(shape))  # loom's shape is a plain tuple

