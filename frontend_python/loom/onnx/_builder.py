"""The state of one export: ONNX nodes and initializers made with onnx.helper,
names for new values, and the loom graph's value types (loom.onnx._ops maps
each node with it)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import loom

_ONNX_TYPES = {
    loom.float32: TensorProto.FLOAT, loom.float64: TensorProto.DOUBLE, loom.float16: TensorProto.FLOAT16,
    loom.bfloat16: TensorProto.BFLOAT16, loom.int64: TensorProto.INT64, loom.int32: TensorProto.INT32,
    loom.int16: TensorProto.INT16, loom.int8: TensorProto.INT8, loom.uint8: TensorProto.UINT8,
    loom.bool: TensorProto.BOOL,
}
_NUMPY_TYPES = {
    loom.float32: np.float32, loom.float64: np.float64, loom.float16: np.float16, loom.int64: np.int64,
    loom.int32: np.int32, loom.int16: np.int16, loom.int8: np.int8, loom.uint8: np.uint8, loom.bool: np.bool_,
}
_FLOATING = (loom.float16, loom.bfloat16, loom.float32, loom.float64)


def onnx_type(dtype):
    return _ONNX_TYPES[dtype]


def is_floating(dtype):
    return dtype in _FLOATING


class UnsupportedOp(RuntimeError):
    """A node of the traced graph has no ONNX form (names the op and the node)."""


class Builder:
    def __init__(self, graph, opset):
        self.opset = opset
        self.values = {v["name"]: v for v in graph.values_info()}
        self.nodes = []
        self.initializers = []
        self._taken = set(self.values)
        self._next = 0
        self.node = None  # the loom node being mapped, for errors

    # ---- names and types -------------------------------------------------------
    def fresh(self, hint="t"):
        while True:
            self._next += 1
            name = f"{hint}_{self._next}"
            if name not in self._taken:
                self._taken.add(name)
                return name

    def dtype(self, name):
        return self.values[name]["dtype"]

    def sizes(self, name):
        return self.values[name]["sizes"]

    def rank(self, name):
        return len(self.sizes(name))

    def declare(self, name, dtype, sizes):
        """Types a value this builder made (so later mappings can read them)."""
        self.values[name] = {"name": name, "kind": "node", "dtype": dtype, "sizes": list(sizes),
                             "wrapped_number": False}

    # ---- emitting --------------------------------------------------------------
    def emit(self, op_type, inputs, outputs=None, **attrs):
        """One ONNX node; returns its output names (fresh ones when not given)."""
        outputs = outputs or [self.fresh(op_type.lower())]
        self.nodes.append(helper.make_node(op_type, list(inputs), list(outputs),
                                           name=self.fresh(f"{op_type}"), **attrs))
        return outputs

    def emit1(self, op_type, inputs, output=None, **attrs):
        return self.emit(op_type, inputs, [output] if output else None, **attrs)[0]

    def constant(self, array, hint="c"):
        """An initializer holding `array` (numpy); returns its name."""
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values, hint="shape"):
        return self.constant(np.asarray(values, dtype=np.int64), hint)

    def scalar(self, value, dtype, hint="s"):
        """A 0-d initializer of loom dtype `dtype`."""
        if dtype == loom.bfloat16:
            return self.cast(self.scalar(value, loom.float32, hint), loom.float32, loom.bfloat16)
        return self.constant(np.asarray(value, dtype=_NUMPY_TYPES[dtype]), hint)

    def cast(self, name, from_dtype, to_dtype):
        if from_dtype == to_dtype:
            return name
        return self.emit1("Cast", [name], to=onnx_type(to_dtype))

    def as_dtype(self, name, dtype):
        """`name` converted to `dtype` (ONNX never promotes; loom does)."""
        return self.cast(name, self.dtype(name), dtype)

    def unsupported(self, why):
        n = self.node
        raise UnsupportedOp(f"loom.onnx.export: node %{', %'.join(n['outputs'])} = loom::{n['op']}(...) {why}")
