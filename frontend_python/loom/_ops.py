"""Functions and Tensor methods generated from the op catalog's schemas.

Each op name (without its overload suffix) becomes ``loom.<name>``; when the
first argument is ``self``, also ``Tensor.<name>``. Both call
``_C._dispatch(name, ...)``, which picks the overload the arguments fit and
raises a TypeError listing every signature when none does. Names the
compiled module or _tensor.py already define keep their hand-written form.
"""
import collections

from . import _C

_return_types = {}


def _namedtuple_for(name, fields):
    key = (name, tuple(fields))
    if key not in _return_types:
        _return_types[key] = collections.namedtuple(name, fields)
    return _return_types[key]


def _make_function(name, returns, method=False):
    tuple_type = _namedtuple_for(name, returns) if returns else None
    return _C._make_op(name, tuple_type, method)


def install(namespace):
    by_name = collections.OrderedDict()
    for name, overload, schema, is_method, is_inplace, returns in _C._ops():
        entry = by_name.setdefault(name, {"schemas": [], "method": False, "returns": None})
        entry["schemas"].append(schema)
        entry["method"] = entry["method"] or is_method
        if len(returns) > 1 and all(returns):
            entry["returns"] = list(returns)
    for name, entry in by_name.items():
        if name not in namespace:
            namespace[name] = _make_function(name, entry["returns"])
        if entry["method"] and not hasattr(_C.Tensor, name):
            setattr(_C.Tensor, name, _make_function(name, entry["returns"], method=True))
