"""loom.onnx: importable, so programs that import it run; export is to be
built on loom.jit's traced graphs (it needs python3-onnx)."""


def export(model, args, f=None, *a, **kwargs):
    raise NotImplementedError("loom.onnx.export is not implemented yet; loom.jit.trace(model, args) and "
                              "loom.jit.save(traced, path) give a model file that C++ loads with loom::jit::load")


def is_in_onnx_export():
    return False
