"""A reference evaluator of ONNX graphs for the tests of loom.onnx.export,
written on PyTorch's ops (the tests' oracle) so it shares no code with loom:
the operators loom's exporter emits, with ONNX's semantics (opset 17)."""
import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, numpy_helper

_TORCH_TYPES = {
    TensorProto.FLOAT: torch.float32, TensorProto.DOUBLE: torch.float64, TensorProto.FLOAT16: torch.float16,
    TensorProto.BFLOAT16: torch.bfloat16, TensorProto.INT64: torch.int64, TensorProto.INT32: torch.int32,
    TensorProto.INT16: torch.int16, TensorProto.INT8: torch.int8, TensorProto.UINT8: torch.uint8,
    TensorProto.BOOL: torch.bool,
}


def _attrs(node):
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _ints(t):
    return [int(v) for v in t.tolist()]


def _pads(attrs, rank=2):
    pads = list(attrs.get("pads", [0] * 2 * rank))
    assert pads[:rank] == pads[rank:], "asymmetric pads"
    return pads[:rank]


def _run_node(op, x, a):
    unary = {"Relu": torch.relu, "Sigmoid": torch.sigmoid, "Tanh": torch.tanh, "Exp": torch.exp, "Log": torch.log,
             "Sqrt": torch.sqrt, "Neg": torch.neg, "Abs": torch.abs, "Erf": torch.erf, "Reciprocal": torch.reciprocal,
             "Floor": torch.floor, "Ceil": torch.ceil, "Sin": torch.sin, "Cos": torch.cos, "Tan": torch.tan,
             "Sign": torch.sign, "IsNaN": torch.isnan, "Round": torch.round, "Not": torch.logical_not,
             "Identity": lambda t: t, "Softplus": F.softplus}
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div, "Pow": torch.pow,
              "Max": torch.maximum, "Min": torch.minimum, "And": torch.logical_and, "Or": torch.logical_or,
              "Xor": torch.logical_xor, "Equal": torch.eq, "Less": torch.lt, "LessOrEqual": torch.le,
              "Greater": torch.gt, "GreaterOrEqual": torch.ge, "MatMul": torch.matmul}
    if op in unary:
        return unary[op](x[0])
    if op in binary:
        return binary[op](x[0], x[1])
    if op == "Cast":
        return x[0].to(_TORCH_TYPES[a["to"]])
    if op == "Mod":
        return torch.fmod(x[0], x[1]) if a.get("fmod") else torch.remainder(x[0], x[1])
    if op == "Where":
        return torch.where(x[0], x[1], x[2])
    if op == "LeakyRelu":
        return F.leaky_relu(x[0], a.get("alpha", 0.01))
    if op == "Elu":
        return F.elu(x[0], a.get("alpha", 1.0))
    if op == "Clip":
        lo = x[1] if len(x) > 1 and x[1] is not None else None
        hi = x[2] if len(x) > 2 and x[2] is not None else None
        return torch.clamp(x[0], lo, hi)
    if op == "Gemm":
        A = x[0].t() if a.get("transA") else x[0]
        B = x[1].t() if a.get("transB") else x[1]
        y = a.get("alpha", 1.0) * (A @ B)
        return y + a.get("beta", 1.0) * x[2] if len(x) > 2 and x[2] is not None else y
    if op == "Conv":
        return F.conv2d(x[0], x[1], x[2] if len(x) > 2 else None, stride=a.get("strides", 1), padding=_pads(a),
                        dilation=a.get("dilations", 1), groups=a.get("group", 1))
    if op == "MaxPool":
        return F.max_pool2d(x[0], a["kernel_shape"], a.get("strides"), _pads(a), a.get("dilations", 1),
                            bool(a.get("ceil_mode", 0)))
    if op == "AveragePool":
        return F.avg_pool2d(x[0], a["kernel_shape"], a.get("strides"), _pads(a), bool(a.get("ceil_mode", 0)),
                            bool(a.get("count_include_pad", 0)))
    if op == "GlobalAveragePool":
        return x[0].mean(dim=(2, 3), keepdim=True)
    if op == "BatchNormalization":
        return F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0, a.get("epsilon", 1e-5))
    if op == "LayerNormalization":
        axis = a.get("axis", -1) % x[0].dim()
        shape = x[0].shape[axis:]
        return F.layer_norm(x[0], shape, x[1], x[2] if len(x) > 2 else None, a.get("epsilon", 1e-5))
    if op == "Softmax":
        return torch.softmax(x[0], a.get("axis", -1))
    if op == "LogSoftmax":
        return torch.log_softmax(x[0], a.get("axis", -1))
    if op == "Reshape":
        return x[0].reshape(_ints(x[1]))
    if op == "Transpose":
        return x[0].permute(a["perm"])
    if op == "Unsqueeze":
        y = x[0]
        for d in sorted(_ints(x[1])):
            y = y.unsqueeze(d)
        return y
    if op == "Squeeze":
        return x[0].squeeze(_ints(x[1])[0])
    if op == "Expand":
        return x[0].expand(torch.broadcast_shapes(x[0].shape, tuple(_ints(x[1])))).clone()
    if op == "Gather":
        return torch.from_numpy(np.take(x[0].numpy(), x[1].numpy(), axis=a.get("axis", 0)))
    if op == "Slice":
        axes = _ints(x[3]) if len(x) > 3 else list(range(len(x[1])))
        steps = _ints(x[4]) if len(x) > 4 else [1] * len(axes)
        index = [slice(None)] * x[0].dim()
        for s, e, ax, st in zip(_ints(x[1]), _ints(x[2]), axes, steps):
            index[ax] = slice(s, min(e, x[0].shape[ax]), st)
        return x[0][tuple(index)]
    if op == "Concat":
        return torch.cat(x, a["axis"])
    if op == "ReduceSum":
        return x[0].sum(dim=_ints(x[1]), keepdim=bool(a.get("keepdims", 1)))
    if op == "ReduceMean":
        return x[0].mean(dim=a["axes"], keepdim=bool(a.get("keepdims", 1)))
    raise NotImplementedError(f"onnx_reference: no {op}")


def run(model, feeds):
    """Runs `model` (an onnx.ModelProto) on `feeds` ({input name: numpy
    array}); returns the outputs as numpy arrays, in order."""
    env = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in model.graph.initializer}
    env.update({k: torch.from_numpy(np.asarray(v)) for k, v in feeds.items()})
    for node in model.graph.node:
        x = [env[n] if n else None for n in node.input]
        env[node.output[0]] = _run_node(node.op_type, x, _attrs(node))
    return [env[o.name].numpy() for o in model.graph.output]
