"""Optimizer: the base class of loom.optim (param_groups, state, state_dict), as in PyTorch."""
import collections
import itertools
import warnings

from .. import _C
from .._grad_mode import enable_grad

Tensor = _C.Tensor


class _RequiredParameter:
    """Marks a hyperparameter with no default (SGD's lr)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: ``param_groups`` is a list of dicts (``'params'`` plus per-group options);
    ``state`` maps each parameter to its per-parameter state dict.

    Subclasses implement ``step``; the update runs under ``loom.no_grad()``.
    """

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append("Parameter Group {}".format(i))
            lines.extend("    {}: {}".format(k, group[k]) for k in sorted(group) if k != "params")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group):
        """Adds a group (a dict with 'params' and optional per-group options) to ``param_groups``."""
        if not isinstance(param_group, dict):
            raise TypeError("param group must be a dict, but got " + _typename(param_group))
        if "params" not in param_group:
            raise ValueError("param group must have a 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter " + name)
            param_group.setdefault(name, default)

        params = param_group["params"]
        ids = {id(p) for p in params}
        if len(ids) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        for group in self.param_groups:
            if any(id(p) in ids for p in group["params"]):
                raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Clears every parameter's .grad: to None (the default, as in PyTorch 2.x) or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad
                    if grad is not None:
                        if grad.grad_fn is not None:
                            grad.detach_()
                        else:
                            grad.requires_grad_(False)
                        grad.fill_(0)

    def step(self, closure=None):
        """Performs one update; ``closure`` (re-evaluates the model, returns the loss) is optional."""
        raise NotImplementedError

    def _grads(self, group, l2=True):
        """(param, gradient, state) for each param of `group` that has a gradient; the gradient is
        negated under 'maximize' and, when `l2`, has weight_decay * param added (as PyTorch does)."""
        maximize = group.get("maximize", False)
        weight_decay = group.get("weight_decay", 0) if l2 else 0
        state_of = self.state
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if maximize:
                grad = grad.neg()
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            yield p, grad, state_of[p]

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def state_dict(self):
        """{'state': {param index: state}, 'param_groups': [group options with 'params' as index lists]}.

        Indices number the parameters across all groups in order, as PyTorch does; the
        tensors in 'state' are the optimizer's own (not copies).
        """
        index_of = {}
        packed_groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            packed_groups.append(packed)
        packed_state = {(index_of[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": packed_groups}

    def load_state_dict(self, state_dict):
        """Restores what ``state_dict()`` returned (deep-copied; tensors cast to each parameter's
        floating dtype and device; a tensor 'step' becomes a number)."""
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("optimizer state dict must be a dict with 'state' and 'param_groups' entries")
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        state = collections.defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = _deepcopy(v)
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            new_group = {k: _deepcopy(v) for k, v in saved.items() if k != "params"}
            new_group["params"] = group["params"]
            new_groups.append(new_group)
        self.__setstate__({"state": state, "param_groups": new_groups})


def _typename(obj):
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else t.__module__ + "." + t.__qualname__


def _deepcopy(value):
    """copy.deepcopy that also copies loom tensors (which have no __deepcopy__)."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return type(value)((k, _deepcopy(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        items = [_deepcopy(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _cast(param, value, key=None):
    """A deep copy of `value` whose tensors follow `param`'s device and floating dtype."""
    if isinstance(value, Tensor):
        if key == "step":
            # A number here: the optimizers keep their step count as a Python float.
            return float(value.item())
        value = value.detach()
        if param.is_floating_point() and value.is_floating_point():
            value = value.to(param.dtype)
        return value.to(param.device).clone()
    if isinstance(value, dict):
        return {k: _cast(param, v, key=k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_cast(param, v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value
