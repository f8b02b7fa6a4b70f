"""loom.jit: capture a model into a graph of catalog ops, as torch.jit.trace.

    traced = loom.jit.trace(model, example)   # runs model(example) once, recording its ops
    print(traced.graph)                       # the IR's text form
    y = traced(x)                             # runs the graph (same shapes as the example)
    g = loom.jit.parse_graph(str(traced.graph))

Python control flow is unrolled; shapes are the example's. The model's
parameters and buffers become named graph inputs the graph holds; any other
tensor the model reads becomes a constant. Views made by tensor methods
(view, t, permute, ...) are not captured yet: trace refuses them, naming the op
that read one.
"""
import contextlib
import warnings

import loom

from .. import _C
from .._C import Tensor

Graph = _C.Graph

__all__ = ["trace", "freeze", "save", "load", "parse_graph", "TracedModule", "Graph", "TracerWarning"]


class TracerWarning(Warning):
    """A traced program read a tensor's value into Python (``.item()``,
    ``bool(t)``, ``.tolist()`` ...): the graph keeps what that value led to
    during the trace and will not follow the data, as torch.jit's warning
    of the same name says."""


# The Tensor methods that hand a tensor's value to Python.
_VALUE_READS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__index__")


@contextlib.contextmanager
def _warn_on_value_reads():
    saved = {}
    for name in _VALUE_READS:
        original = getattr(Tensor, name, None)
        if original is None:
            continue
        saved[name] = Tensor.__dict__.get(name)

        def reading(self, *args, _original=original, _name=name, **kwargs):
            warnings.warn(f"loom.jit.trace: Tensor.{_name}() reads a tensor's value into Python; the graph keeps "
                          "the result of this trace and will not follow the data (a Python branch or number made "
                          "from it is fixed in the graph)", TracerWarning, stacklevel=2)
            return _original(self, *args, **kwargs)

        setattr(Tensor, name, reading)
    try:
        yield
    finally:
        for name, original in saved.items():
            if original is None:
                delattr(Tensor, name)
            else:
                setattr(Tensor, name, original)


def _as_tuple(example_inputs):
    if isinstance(example_inputs, Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        for i, x in enumerate(example_inputs):
            if not isinstance(x, Tensor):
                raise TypeError(f"loom.jit.trace: example input {i} must be a Tensor, not {type(x).__name__}")
        return tuple(example_inputs)
    raise TypeError(f"loom.jit.trace: example_inputs must be a Tensor or a tuple of Tensors, "
                    f"not {type(example_inputs).__name__}")


class TracedModule:
    """What trace returns: call it like the model (same input shapes).

    ``graph`` is the captured Graph, ``code`` its text; ``outputs`` is 1 when
    the model returned one Tensor (then calls return a Tensor), else a tuple.
    """

    def __init__(self, graph, single_output, name="TracedModule"):
        self.graph = graph
        self._single = single_output
        self._name = name
        self.training = False

    @property
    def code(self):
        return str(self.graph)

    def forward(self, *inputs):
        outs = self.graph.run(list(inputs))
        return outs[0] if self._single else tuple(outs)

    __call__ = forward

    def named_parameters(self):
        """The graph's parameters (a traced module's own tensors: training the
        traced module trains them), without its constants."""
        return [(n, self.graph.tensors()[n]) for n in self.graph.parameter_names]

    def parameters(self):
        return [t for _, t in self.named_parameters()]

    def state_dict(self):
        """The graph's parameters and buffers by name (what the traced
        model's state_dict held), as a dict; constants are not included."""
        return dict(self.named_parameters())

    def to(self, device):
        """Moves the parameters and constants to ``device`` and retargets the
        graph to it, in place (as nn.Module.to); returns self."""
        if not isinstance(device, _C.device):
            device = _C.device(device)
        _C._jit_graph_to(self.graph, device)
        return self

    def cuda(self, index=0):
        return self.to(f"cuda:{index}")

    def cpu(self):
        return self.to("cpu")

    def eval(self):
        """Kept for PyTorch's API: a traced graph runs the mode it was traced
        in (dropout and batch norm are recorded as they ran); returns self."""
        self.training = False
        return self

    def train(self, mode=True):
        """As eval(): the recorded mode does not change. ``mode=True`` sets
        ``training`` (what PyTorch code reads) but the graph still runs as traced."""
        self.training = bool(mode)
        return self

    def __repr__(self):
        return f"{self._name}(traced: {len(self.graph.ops)} nodes)\n{self.graph}"


def _close(a, b, rtol=1e-5, atol=1e-6):
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    both_nan = a.isnan() & b.isnan()
    return bool((((a - b).abs() <= atol + rtol * b.abs()) | both_nan | (a == b)).all())


def trace(func, example_inputs, *, input_names=None, check_trace=True, dynamic_batch=False):
    """Runs ``func(*example_inputs)`` once and records every catalog op it calls.

    ``func`` is a loom.nn.Module (its parameters and buffers become the graph's
    named parameters) or any callable returning a Tensor or a tuple/list of
    Tensors. With ``check_trace`` (the default, as torch.jit.trace), the graph
    runs once on the example inputs and must give the model's results.
    ``dynamic_batch=True``: dim 0 of the inputs that share the first one's is
    the batch, and the graph runs on any batch size (check_trace then also
    compares at one more than the example's batch).
    """
    inputs = _as_tuple(example_inputs)
    params = []
    name = type(func).__name__
    if hasattr(func, "named_parameters") and hasattr(func, "named_buffers"):
        seen = set()
        for n, t in list(func.named_parameters()) + list(func.named_buffers()):
            if t is not None and id(t) not in seen:
                seen.add(id(t))
                params.append((n, t))
    single = []

    def program(*xs):
        out = func(*xs)
        single.append(isinstance(out, Tensor))
        return out

    from ..autograd import no_grad  # the graph records the forward ops, not autograd's
    with no_grad():
        with _warn_on_value_reads():
            graph = _C._jit_trace(program, list(inputs), params, list(input_names or []), dynamic_batch)
        traced = TracedModule(graph, single[0], name)
        if check_trace:
            checks = [("the example inputs", inputs)]
            if dynamic_batch:
                batch = inputs[0].shape[0]
                grown = tuple(loom.cat([x, x[:1]]) if x.dim() > 0 and x.shape[0] == batch else x for x in inputs)
                checks.append((f"a batch of {batch + 1}", grown))
            for what, xs in checks:
                expected = func(*xs)
                got = traced(*xs)
                exp = (expected,) if isinstance(expected, Tensor) else tuple(expected)
                gotten = (got,) if isinstance(got, Tensor) else tuple(got)
                for i, (a, b) in enumerate(zip(gotten, exp)):
                    if a.shape != b.shape or a.dtype != b.dtype or not _close(a, b):
                        raise RuntimeError(f"loom.jit.trace: the traced graph's output {i} differs from the "
                                           f"model's on {what} (does the model depend on state, randomness or "
                                           "sizes the trace cannot see?); pass check_trace=False to keep it anyway")
    return traced


def freeze(traced, optimize=True):
    """A frozen copy of a traced model, as torch.jit.freeze: for inference.

    Its parameters become constants (copies: training the original later
    does not reach the frozen one), a batch_norm after a conv or linear is
    folded into that layer's weight and bias (results then differ from the
    unfrozen model's by rounding, as with PyTorch's freeze), and, with
    ``optimize``, the graph's passes run (constants fold through the weights,
    elementwise chains fuse). The model must have been traced in eval mode.
    """
    if not isinstance(traced, TracedModule):
        raise TypeError(f"loom.jit.freeze: expected what loom.jit.trace returns, got {type(traced).__name__}")
    graph = parse_graph(str(traced.graph))
    params = set(traced.graph.parameter_names)
    for name, t in traced.graph.tensors().items():
        graph.set_tensor(name, t.detach().clone() if name in params else t)
    if optimize:
        graph.freeze()
    else:
        graph.freeze_parameters()
        graph.fold_batch_norm()
    return TracedModule(graph, traced._single, traced._name)


def save(traced, f):
    """Writes a traced model to one file: its parameters and constants as
    safetensors, the graph's text and the format version in the metadata.
    Loading it (here or with loom::jit::load in C++) runs no code."""
    graph = traced.graph if isinstance(traced, TracedModule) else traced
    _C._jit_save(graph, str(f))


def load(f, map_location=None):
    """Reads a file written by save. ``map_location`` (a device or its name)
    moves the model there; a file traced on a GPU loads on a CPU-only machine
    that way. Calls return a Tensor for a one-output graph, else a tuple."""
    if map_location is not None and not isinstance(map_location, _C.device):
        map_location = _C.device(map_location)
    graph = _C._jit_load(str(f), map_location)
    return TracedModule(graph, graph.num_outputs == 1, "TracedModule")


def parse_graph(text):
    """Reads a Graph back from its text form (``str(graph)``)."""
    return _C._jit_parse_graph(text)
