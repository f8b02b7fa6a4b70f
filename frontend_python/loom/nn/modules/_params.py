"""Helpers the layers share to create and initialise their parameters."""
import math

from ... import _C
from .. import init
from ..parameter import Parameter


def add_parameter(module, name, shape, present=True, device=None, dtype=None):
    """module.<name> = a new (uninitialised) Parameter of ``shape``, or a registered None if not present."""
    if present:
        setattr(module, name, Parameter(_C.empty(tuple(shape), device=device, dtype=dtype)))
    else:
        module.register_parameter(name, None)


def reset_kaiming_uniform(weight, bias):
    """PyTorch's Linear/Conv init: kaiming_uniform_(a=sqrt(5)), i.e. U(+-1/sqrt(fan_in)); bias the same bound."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0  # an empty weight: a zero bias, not garbage
        init.uniform_(bias, -bound, bound)


def reset_affine(weight, bias):
    """Norm layers start as the identity: weight 1, bias 0."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)
