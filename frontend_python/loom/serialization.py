"""loom.save / loom.load, as torch.save / torch.load.

    loom.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, "ckpt.pt")
    ckpt = loom.load("ckpt.pt")                      # weights_only=True: no code runs
    loom.save(model, "model.pt"); loom.load("model.pt", weights_only=False)   # whole objects

Two formats:
- PyTorch's zip format (``_torch_format.py``), the default: any picklable object, tensors stored
  as storages beside the pickle. PyTorch loads loom's files, and loom loads PyTorch's (state dicts,
  optimizer states, whole checkpoints) without PyTorch installed.
- safetensors (``_safetensors.py``): with ``format="safetensors"`` or a path ending in
  ".safetensors"; tensors, dicts, lists, tuples, numbers, strings and None only, and never code.

``load`` tells the two apart by their first bytes. With ``weights_only=True`` (the default, as in
PyTorch 2.6) a pickle may name only the globals a checkpoint needs (``_weights_only.py``); others
are allowed with ``add_safe_globals`` / ``safe_globals``, or everything with ``weights_only=False``
(for files you trust: it can run any code).
"""
import os

# The two format modules (and zipfile, pickle, json behind them) load on the first save / load:
# most programs import loom without touching a file, and the import stays fast.
from ._weights_only import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals  # noqa: F401

DEFAULT_PROTOCOL = 2


def _format_for(f, format):
    if format is not None:
        if format not in ("torch", "safetensors"):
            raise ValueError(f"loom.save: format must be 'torch' or 'safetensors', got {format!r}")
        return format
    if not hasattr(f, "write") and os.fspath(f).endswith(".safetensors"):
        return "safetensors"
    return "torch"


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         *, format=None, metadata=None):
    """Writes obj to f (a path or a binary file): PyTorch's zip format, or safetensors (format=
    "safetensors", a ".safetensors" path, or metadata= given, which only safetensors has)."""
    if pickle_module is not None or pickle_protocol != DEFAULT_PROTOCOL:
        raise ValueError("loom.save: only the default pickle module and protocol 2 are supported (as PyTorch writes)")
    if not _use_new_zipfile_serialization:
        raise ValueError("loom.save: the legacy (pre-1.6) PyTorch format is not supported; use the zip format")
    chosen = "safetensors" if metadata is not None and format is None else _format_for(f, format)
    if chosen == "safetensors":
        from . import _safetensors
        _safetensors.save(obj, f, metadata=metadata)
    else:
        if metadata is not None:
            raise ValueError("loom.save: metadata= is for the safetensors format")
        from . import _torch_format
        _torch_format.save(obj, f)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Reads what save wrote, a PyTorch checkpoint or a safetensors file, from f (a path or a binary
    file). map_location: a device or name for every tensor, or a dict {saved location: device}."""
    if pickle_module is not None:
        raise ValueError("loom.load: pickle_module is not supported")
    if hasattr(f, "read"):
        data = f.read()
    else:
        with open(os.fspath(f), "rb") as src:
            data = src.read()
    from . import _safetensors, _torch_format
    if _torch_format.is_zip(data):
        return _torch_format.load_bytes(data, map_location, weights_only=weights_only)
    if data[:2] in (b"\x80\x02", b"\x80\x03", b"\x80\x04") or data[:1] == b"\x80":
        raise ValueError("loom.load: this is a legacy (pre-1.6, non-zip) PyTorch file, which loom does not read; "
                         "re-save it with a recent torch.save")
    if isinstance(map_location, dict):
        raise TypeError("loom.load: a dict map_location applies to PyTorch checkpoints, not safetensors files")
    return _safetensors.load_bytes(data, map_location)
