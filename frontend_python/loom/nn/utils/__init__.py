"""loom.nn.utils: gradient clipping, parameters as one vector, and (rnn) sequence packing."""
from .clip_grad import clip_grad_norm_, clip_grad_norm, clip_grad_value_  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from . import rnn  # noqa: F401,E402
