"""loom.onnx: a model as an ONNX file, with PyTorch's torch.onnx.export signature.

Built on loom.jit: the model is traced (or a TracedModule is taken as it is),
each catalog op of the graph becomes ONNX operators (loom.onnx._ops, written
with onnx.helper from Debian's python3-onnx), the parameters and constants
become initializers, and onnx.checker checks the model before it is written.
An op without an ONNX form is an error naming the op and the node.
"""
import contextlib

_exporting = False


def is_in_onnx_export():
    return _exporting


def export(model, args, f, export_params=True, verbose=False, training=None, input_names=None,
           output_names=None, operator_export_type=None, opset_version=None, do_constant_folding=True,
           dynamic_axes=None, keep_initializers_as_inputs=None, **unused):
    """Traces ``model(*args)`` and writes it to ``f`` (a path or a binary file
    object) as ONNX; returns the onnx.ModelProto.

    ``input_names`` / ``output_names`` name the graph's inputs and outputs;
    ``dynamic_axes`` ({name: {axis: label}} or {name: [axes]}) makes those
    dimensions symbolic; ``opset_version`` defaults to 17 (the newest
    python3-onnx 1.12 knows). Dropout and batch norm are exported in eval
    mode, as PyTorch does: the model is put in eval mode for the trace and
    restored afterwards."""
    global _exporting
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        raise ImportError("loom.onnx.export needs the onnx package (Debian: apt-get install python3-onnx)") from e
    from . import _export
    import loom
    was_training = getattr(model, "training", None)
    if hasattr(model, "eval") and not isinstance(model, loom.jit.TracedModule):
        model.eval()
    _exporting = True
    try:
        proto = _export.export_model(model, args, input_names=input_names, output_names=output_names,
                                     opset=opset_version or 17, dynamic_axes=dynamic_axes or {},
                                     fold=do_constant_folding, export_params=export_params)
    finally:
        _exporting = False
        if was_training and hasattr(model, "train"):
            model.train(True)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is not None:
        import onnx
        onnx.save(proto, f)
    return proto
