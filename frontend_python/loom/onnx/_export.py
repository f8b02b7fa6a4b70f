"""A traced graph as an onnx.ModelProto (loom.onnx.export)."""
import onnx
from onnx import helper, numpy_helper

import loom

from ._builder import Builder, UnsupportedOp, onnx_type
from ._ops import MAPPINGS


def _trace(model, args):
    if isinstance(model, loom.jit.TracedModule):
        return model.graph
    inputs = args if isinstance(args, tuple) else (args,)
    with loom.no_grad():
        return loom.jit.trace(model, inputs, check_trace=False).graph


def _value_info(b, name, onnx_name, dims):
    sizes = b.sizes(name)
    shape = [dims.get(i, "batch" if s < 0 else s) for i, s in enumerate(sizes)]
    return helper.make_tensor_value_info(onnx_name, onnx_type(b.dtype(name)), shape)


def _dynamic(spec):
    if isinstance(spec, dict):
        return {int(k): str(v) for k, v in spec.items()}
    return {int(k): f"dim_{k}" for k in spec}


_VIEW_OPS = {"view", "permute", "transpose", "t", "unsqueeze", "squeeze", "expand", "select", "slice", "narrow",
             "as_strided", "detach", "contiguous"}


def _is_view_result(b, name):
    return b.producers.get(name, "").split(".")[0] in _VIEW_OPS


def _map_node(b, n):
    if n["op"] == "_fused":
        _inline_fused(b, n)
        return
    fn = MAPPINGS.get(n["op"]) or MAPPINGS.get(n["op"].split(".")[0])  # transpose.int: its overload's name
    n = dict(n, op=n["op"].split(".")[0]) if fn else n
    base = n["op"][:-1]
    if fn is None and n["op"].endswith("_") and base in MAPPINGS:
        # An in-place op (ReLU(inplace=True)'s relu_): in the graph it yields
        # a new value for the tensor it wrote, which is its functional op's
        # result, unless that tensor is a view whose base is read again.
        b.node = n
        written = n["inputs"][0]
        if b.values[written]["kind"] == "node" and _is_view_result(b, written):
            b.unsupported("writes in place into a view (its base would change too)")
        fn, n = MAPPINGS[base], dict(n, op=base)
    b.node = n
    if fn is None:
        b.unsupported("has no ONNX mapping (loom.onnx._ops.MAPPINGS)")
    fn(b, n)


def _inline_fused(b, n):
    """A _fused node's body, mapped op by op with its values renamed into
    the outer graph."""
    body = loom.jit.parse_graph(n["args"]["body"])
    rename = {}
    inputs = [v for v in body.values_info() if v["kind"] != "node"]
    for v, outer in zip(inputs, n["inputs"]):
        rename[v["name"]] = outer
    out_name = body.output_names[0]
    for v in body.values_info():
        if v["kind"] == "node":
            rename[v["name"]] = n["outputs"][0] if v["name"] == out_name else b.fresh("fused")
            b.declare(rename[v["name"]], v["dtype"], v["sizes"])
    for inner in body.nodes_info():
        _map_node(b, {"op": inner["op"], "args": inner["args"],
                      "inputs": [rename[x] if x is not None else None for x in inner["inputs"]],
                      "outputs": [rename[x] for x in inner["outputs"]]})


def export_model(model, args, *, input_names, output_names, opset, dynamic_axes, fold, export_params):
    graph = _trace(model, args)
    if fold:  # the passes but fusion: ONNX runtimes fuse themselves
        for _ in range(4):
            if not (graph.simplify() + graph.fold_constants() + graph.eliminate_common_subexpressions()
                    + graph.eliminate_dead_code()):
                break
    b = Builder(graph, opset)
    values = graph.values_info()
    graph_inputs = [v["name"] for v in values if v["kind"] == "input"]
    held = [v["name"] for v in values if v["kind"] in ("param", "const")]
    outputs = list(graph.output_names)

    # User names for inputs and outputs: the graph's values are renamed
    # through Identity nodes, so the mapped nodes keep loom's names.
    in_names = list(input_names or [])[:len(graph_inputs)]
    in_names += graph_inputs[len(in_names):]
    out_names = list(output_names or [])[:len(outputs)]
    out_names += [f"output{i}" if o in graph_inputs or o in held else o for i, o in enumerate(outputs)][len(out_names):]

    tensors = graph.tensors()
    initializers = []
    for name in held:
        t = tensors[name].detach().cpu()
        if t.dtype == loom.bfloat16:
            t = t.float()
            initializers.append(numpy_helper.from_array(t.numpy(), name + "__f32"))
            b.emit1("Cast", [name + "__f32"], name, to=onnx.TensorProto.BFLOAT16)
            continue
        initializers.append(numpy_helper.from_array(t.contiguous().numpy(), name))
    for loom_name, user in zip(graph_inputs, in_names):
        if user != loom_name:
            b.emit1("Identity", [user], loom_name)
    nodes = graph.nodes_info()
    b.producers = {o: n["op"] for n in nodes for o in n["outputs"]}
    for n in nodes:
        try:
            _map_node(b, n)
        except UnsupportedOp:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise UnsupportedOp(f"loom.onnx.export: node %{n['outputs'][0]} = loom::{n['op']}(...) could not be "
                                f"mapped: {type(e).__name__}: {e}") from e
    for loom_name, user in zip(outputs, out_names):
        if user != loom_name:
            b.emit1("Identity", [loom_name], user)

    inputs_info = [_value_info(b, v, u, _dynamic(dynamic_axes.get(u, {}))) for v, u in zip(graph_inputs, in_names)]
    outputs_info = [_value_info(b, v, u, _dynamic(dynamic_axes.get(u, {}))) for v, u in zip(outputs, out_names)]
    if not export_params:
        inputs_info += [helper.make_tensor_value_info(i.name, i.data_type, list(i.dims)) for i in initializers]
        initializers = []
    onnx_graph = helper.make_graph(b.nodes, type(model).__name__, inputs_info, outputs_info,
                                   initializer=initializers + b.initializers)
    proto = helper.make_model(onnx_graph, producer_name="loom", producer_version=loom.__version__,
                              opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(proto)
    return proto
