"""Each catalog op's ONNX form: a function (builder, node) that emits ONNX
nodes writing the loom node's outputs under their own names. An op missing
from MAPPINGS is an error naming it and the node (loom.onnx.export)."""
import math

import numpy as np

import loom

from ._builder import is_floating

MAPPINGS = {}


def maps(*ops):
    def register(fn):
        for op in ops:
            MAPPINGS[op] = fn
        return fn
    return register


def _out(n):
    return n["outputs"][0]


def _inputs_as_result(b, n):
    """The node's tensor inputs converted to its result dtype (loom promotes,
    ONNX does not)."""
    return [b.as_dtype(x, b.dtype(_out(n))) for x in n["inputs"] if x is not None]


def _compare_dtype(b, xs):
    """The dtype two compared values meet in: loom's own promotion, asked of
    one-element probes (a wrapped number probed as a Python number)."""
    def probe(name):
        v = b.values[name]
        if v["wrapped_number"]:
            return 0.0 if is_floating(v["dtype"]) else (False if v["dtype"] == loom.bool else 0)
        return loom.zeros([1] * len(v["sizes"]), dtype=v["dtype"])
    pa, pc = (probe(x) for x in xs)
    if not isinstance(pa, loom.Tensor) and not isinstance(pc, loom.Tensor):
        return b.dtype(xs[0])
    return (pa + pc).dtype if isinstance(pa, loom.Tensor) else (pc + pa).dtype


# ---- elementwise ---------------------------------------------------------------

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "neg": "Neg", "abs": "Abs", "erf": "Erf", "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "sign": "Sign", "logical_not": "Not", "isnan": "IsNaN",
          "round": "Round"}


@maps(*_UNARY)
def _unary(b, n):
    if n["op"] == "round" and n["args"].get("decimals", 0) != 0:
        b.unsupported("rounds to decimals (ONNX Round has none)")
    (x,) = _inputs_as_result(b, n) if n["op"] not in ("logical_not", "isnan") else [n["inputs"][0]]
    if n["op"] == "logical_not":
        x = b.as_dtype(x, loom.bool)
    b.emit1(_UNARY[n["op"]], [x], _out(n))


@maps("rsqrt")
def _rsqrt(b, n):
    (x,) = _inputs_as_result(b, n)
    b.emit1("Reciprocal", [b.emit1("Sqrt", [x])], _out(n))


@maps("square")
def _square(b, n):
    (x,) = _inputs_as_result(b, n)
    b.emit1("Mul", [x, x], _out(n))


@maps("silu")
def _silu(b, n):
    (x,) = _inputs_as_result(b, n)
    b.emit1("Mul", [x, b.emit1("Sigmoid", [x])], _out(n))


@maps("gelu")
def _gelu(b, n):
    (x,) = _inputs_as_result(b, n)
    dt = b.dtype(_out(n))
    half, one = b.scalar(0.5, dt), b.scalar(1.0, dt)
    if n["args"].get("approximate", "none") == "tanh":
        cube = b.emit1("Mul", [b.emit1("Mul", [x, x]), x])
        inner = b.emit1("Add", [x, b.emit1("Mul", [cube, b.scalar(0.044715, dt)])])
        t = b.emit1("Tanh", [b.emit1("Mul", [inner, b.scalar(math.sqrt(2.0 / math.pi), dt)])])
    else:
        t = b.emit1("Erf", [b.emit1("Mul", [x, b.scalar(1.0 / math.sqrt(2.0), dt)])])
    b.emit1("Mul", [b.emit1("Mul", [x, half]), b.emit1("Add", [one, t])], _out(n))


@maps("leaky_relu")
def _leaky_relu(b, n):
    (x,) = _inputs_as_result(b, n)
    b.emit1("LeakyRelu", [x], _out(n), alpha=float(n["args"].get("negative_slope", 0.01)))


@maps("elu")
def _elu(b, n):
    a = n["args"]
    if a.get("scale", 1) != 1 or a.get("input_scale", 1) != 1:
        b.unsupported("has scale or input_scale other than 1 (ONNX Elu has only alpha)")
    (x,) = _inputs_as_result(b, n)
    b.emit1("Elu", [x], _out(n), alpha=float(a.get("alpha", 1)))


@maps("softplus")
def _softplus(b, n):
    a = n["args"]
    if a.get("beta", 1) != 1:
        b.unsupported("has beta other than 1 (ONNX Softplus has none)")
    (x,) = _inputs_as_result(b, n)
    b.emit1("Softplus", [x], _out(n))


@maps("clamp", "hardtanh")
def _clip(b, n):
    (x,) = _inputs_as_result(b, n)
    dt = b.dtype(_out(n))
    a = n["args"]
    lo, hi = (a.get("min"), a.get("max")) if n["op"] == "clamp" else (a.get("min_val", -1), a.get("max_val", 1))
    b.emit1("Clip", [x, b.scalar(lo, dt) if lo is not None else "", b.scalar(hi, dt) if hi is not None else ""],
            _out(n))


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max",
           "minimum": "Min", "fmod": "Mod", "remainder": "Mod"}


@maps(*_BINARY)
def _binary(b, n):
    op = n["op"]
    if op == "div" and n["args"].get("rounding_mode") is not None:
        b.unsupported("divides with rounding_mode (no ONNX operator)")
    if op == "remainder" and is_floating(b.dtype(_out(n))):
        b.unsupported("is a floating remainder (ONNX Mod has C's sign rule for floats)")
    x, y = _inputs_as_result(b, n)
    alpha = n["args"].get("alpha", 1)
    if op in ("add", "sub") and alpha != 1:
        y = b.emit1("Mul", [y, b.scalar(alpha, b.dtype(_out(n)))])
    extra = {"fmod": 1 if op == "fmod" else 0} if op in ("fmod", "remainder") else {}
    if op == "mul" and b.dtype(_out(n)) == loom.bool:
        b.emit1("And", [x, y], _out(n))
        return
    b.emit1(_BINARY[op], [x, y], _out(n), **extra)


_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual"}


@maps("eq", "ne", "lt", "le", "gt", "ge")
def _compare(b, n):
    xs = n["inputs"]
    dt = _compare_dtype(b, xs)
    x, y = (b.as_dtype(v, dt) for v in xs)
    if n["op"] == "ne":
        b.emit1("Not", [b.emit1("Equal", [x, y])], _out(n))
    else:
        b.emit1(_COMPARE[n["op"]], [x, y], _out(n))


@maps("logical_and", "logical_or", "logical_xor")
def _logical(b, n):
    x, y = (b.as_dtype(v, loom.bool) for v in n["inputs"])
    b.emit1({"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}[n["op"]], [x, y], _out(n))


@maps("where")
def _where(b, n):
    c, x, y = n["inputs"]
    dt = b.dtype(_out(n))
    b.emit1("Where", [b.as_dtype(c, loom.bool), b.as_dtype(x, dt), b.as_dtype(y, dt)], _out(n))


@maps("_to_copy")
def _to_copy(b, n):
    b.emit1("Identity", [b.as_dtype(n["inputs"][0], b.dtype(_out(n)))], _out(n))


@maps("contiguous", "clone", "detach")
def _identity(b, n):
    b.emit1("Identity", [n["inputs"][0]], _out(n))


@maps("dropout")
def _dropout(b, n):
    if n["args"].get("train") and n["args"].get("p", 0) > 0:
        b.unsupported("is a training-mode dropout (export the model in eval mode)")
    b.emit1("Identity", [n["inputs"][0]], _out(n))


# ---- linear algebra ----------------------------------------------------------------

@maps("matmul", "mm", "bmm")
def _matmul(b, n):
    b.emit1("MatMul", list(n["inputs"]), _out(n))


@maps("linear")
def _linear(b, n):
    x, w, bias = n["inputs"]
    if b.rank(x) == 2:
        b.emit1("Gemm", [x, w] + ([bias] if bias else []), _out(n), transB=1)
        return
    y = b.emit1("MatMul", [x, b.emit1("Transpose", [w], perm=[1, 0])])
    b.emit1("Add" if bias else "Identity", [y, bias] if bias else [y], _out(n))


@maps("addmm")
def _addmm(b, n):
    c, x, y = n["inputs"]
    a = n["args"]
    b.emit1("Gemm", [x, y, c], _out(n), alpha=float(a.get("alpha", 1)), beta=float(a.get("beta", 1)))


# ---- convolution, pooling, normalisation ---------------------------------------------

def _pair(v):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * 2 if len(v) == 1 else v


@maps("conv2d")
def _conv2d(b, n):
    x, w, bias = n["inputs"]
    a = n["args"]
    pad = _pair(a.get("padding", 0))
    b.emit1("Conv", [x, w] + ([bias] if bias else []), _out(n), kernel_shape=b.sizes(w)[2:],
            strides=_pair(a.get("stride", 1)), pads=pad + pad, dilations=_pair(a.get("dilation", 1)),
            group=int(a.get("groups", 1)))


@maps("max_pool2d", "avg_pool2d")
def _pool(b, n):
    a = n["args"]
    kernel = _pair(a["kernel_size"])
    stride = _pair(a.get("stride") or kernel)
    pad = _pair(a.get("padding", 0))
    attrs = dict(kernel_shape=kernel, strides=stride, pads=pad + pad, ceil_mode=int(bool(a.get("ceil_mode"))))
    if n["op"] == "max_pool2d":
        if _pair(a.get("dilation", 1)) != [1, 1]:
            attrs["dilations"] = _pair(a["dilation"])
        b.emit1("MaxPool", [n["inputs"][0]], _out(n), **attrs)
        return
    if a.get("divisor_override") is not None:
        b.unsupported("has divisor_override (no ONNX form)")
    b.emit1("AveragePool", [n["inputs"][0]], _out(n), count_include_pad=int(bool(a.get("count_include_pad", True))),
            **attrs)


@maps("adaptive_avg_pool2d")
def _adaptive_avg_pool2d(b, n):
    if list(n["args"]["output_size"]) != [1, 1]:
        b.unsupported("pools to a size other than 1x1 (ONNX has GlobalAveragePool only)")
    b.emit1("GlobalAveragePool", [n["inputs"][0]], _out(n))


@maps("batch_norm")
def _batch_norm(b, n):
    x, mean, var, w, bias = n["inputs"]
    if n["args"].get("training"):
        b.unsupported("is a training-mode batch_norm (export the model in eval mode)")
    if mean is None or var is None:
        b.unsupported("has no running statistics")
    c = b.sizes(x)[1]
    dt = b.dtype(x)
    w = w or b.scalar(np.ones(c), dt, "ones")
    bias = bias or b.scalar(np.zeros(c), dt, "zeros")
    b.emit1("BatchNormalization", [x, w, bias, mean, var], _out(n), epsilon=float(n["args"].get("eps", 1e-5)))


@maps("layer_norm")
def _layer_norm(b, n):
    x, w, bias = n["inputs"]
    k = len(n["args"]["normalized_shape"])
    shape = b.sizes(x)[-k:]
    dt = b.dtype(x)
    w = w or b.scalar(np.ones(shape), dt, "ones")
    ins = [x, w] + ([bias] if bias else [])
    b.emit1("LayerNormalization", ins, _out(n), axis=-k, epsilon=float(n["args"].get("eps", 1e-5)))


@maps("softmax", "log_softmax")
def _softmax(b, n):
    x = n["inputs"][0]
    if n["args"].get("dtype") is not None:
        x = b.as_dtype(x, n["args"]["dtype"])
    b.emit1("Softmax" if n["op"] == "softmax" else "LogSoftmax", [x], _out(n), axis=int(n["args"]["dim"]))


# ---- shapes and views -------------------------------------------------------------------

@maps("view")
def _view(b, n):
    b.emit1("Reshape", [n["inputs"][0], b.ints(n["args"]["size"])], _out(n))


@maps("permute")
def _permute(b, n):
    b.emit1("Transpose", [n["inputs"][0]], _out(n), perm=list(n["args"]["dims"]))


@maps("transpose")
def _transpose(b, n):
    x = n["inputs"][0]
    perm = list(range(b.rank(x)))
    d0, d1 = (d % max(len(perm), 1) for d in (n["args"]["dim0"], n["args"]["dim1"]))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    b.emit1("Transpose", [x], _out(n), perm=perm)


@maps("t")
def _t(b, n):
    x = n["inputs"][0]
    b.emit1("Transpose" if b.rank(x) == 2 else "Identity", [x], _out(n), **({"perm": [1, 0]} if b.rank(x) == 2 else {}))


@maps("unsqueeze")
def _unsqueeze(b, n):
    b.emit1("Unsqueeze", [n["inputs"][0], b.ints([n["args"]["dim"]], "axes")], _out(n))


@maps("squeeze")
def _squeeze(b, n):
    x = n["inputs"][0]
    d = n["args"]["dim"] % max(b.rank(x), 1)
    if b.rank(x) == 0 or b.sizes(x)[d] != 1:
        b.emit1("Identity", [x], _out(n))
        return
    b.emit1("Squeeze", [x, b.ints([d], "axes")], _out(n))


@maps("expand")
def _expand(b, n):
    x = n["inputs"][0]
    # -1 keeps the input's size: 1 for ONNX Expand, which broadcasts.
    size = [1 if s == -1 else s for s in n["args"]["size"]]
    b.emit1("Expand", [x, b.ints(size)], _out(n))


@maps("select")
def _select(b, n):
    x = n["inputs"][0]
    d = n["args"]["dim"] % b.rank(x)
    b.emit1("Gather", [x, b.constant(np.asarray(n["args"]["index"], dtype=np.int64), "index")], _out(n), axis=d)


@maps("slice", "narrow")
def _slice(b, n):
    x = n["inputs"][0]
    a = n["args"]
    d = a.get("dim", 0) % b.rank(x)
    if n["op"] == "narrow":
        start, end, step = a["start"], a["start"] + a["length"], 1
    else:
        start = a.get("start") or 0
        end = a.get("end")
        end = np.iinfo(np.int64).max if end is None else end
        step = a.get("step", 1)
    b.emit1("Slice", [x, b.ints([start], "starts"), b.ints([end], "ends"), b.ints([d], "axes"),
                      b.ints([step], "steps")], _out(n))


@maps("cat")
def _cat(b, n):
    dt = b.dtype(_out(n))
    b.emit1("Concat", [b.as_dtype(x, dt) for x in n["inputs"]], _out(n), axis=int(n["args"].get("dim", 0)))


@maps("embedding")
def _embedding(b, n):
    w, idx = n["inputs"]
    b.emit1("Gather", [w, b.as_dtype(idx, loom.int64)], _out(n), axis=0)


@maps("sum", "mean")
def _reduce(b, n):
    x = n["inputs"][0]
    a = n["args"]
    if a.get("dtype") is not None:
        x = b.as_dtype(x, a["dtype"])
    elif b.dtype(x) != b.dtype(_out(n)):
        x = b.as_dtype(x, b.dtype(_out(n)))
    dims = a.get("dim")
    dims = list(range(b.rank(n["inputs"][0]))) if dims is None or len(dims) == 0 else list(dims)
    keep = int(bool(a.get("keepdim", False)))
    if n["op"] == "sum":
        b.emit1("ReduceSum", [x, b.ints(dims, "axes")], _out(n), keepdims=keep)
    else:  # opset 17: ReduceMean's axes are an attribute
        b.emit1("ReduceMean", [x], _out(n), axes=dims, keepdims=keep)


@maps("scaled_dot_product_attention")
def _attention(b, n):
    q, k, v, mask = n["inputs"]
    a = n["args"]
    if a.get("dropout_p", 0):
        b.unsupported("has dropout (export in eval mode)")
    dt = b.dtype(q)
    scale = a.get("scale")
    scale = 1.0 / math.sqrt(b.sizes(q)[-1]) if scale is None else scale
    rank = b.rank(k)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    scores = b.emit1("Mul", [b.emit1("MatMul", [q, b.emit1("Transpose", [k], perm=perm)]), b.scalar(scale, dt)])
    L, S = b.sizes(q)[-2], b.sizes(k)[-2]
    if a.get("is_causal"):
        keep = np.tril(np.ones((L, S), dtype=np.bool_))
        scores = b.emit1("Where", [b.constant(keep, "causal"), scores, b.scalar(-np.inf, dt)])
    if mask is not None:
        if b.dtype(mask) == loom.bool:
            scores = b.emit1("Where", [mask, scores, b.scalar(-np.inf, dt)])
        else:
            scores = b.emit1("Add", [scores, b.as_dtype(mask, dt)])
    b.emit1("MatMul", [b.emit1("Softmax", [scores], axis=-1), v], _out(n))
