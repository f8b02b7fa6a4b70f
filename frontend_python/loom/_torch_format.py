"""PyTorch's checkpoint format (torch.save since 1.6), written and read without PyTorch.

A zip archive, stored uncompressed, every record under one folder ``<name>/``:
    data.pkl       the object, pickled (protocol 2); each tensor is a call of
                   ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``
                   whose storage is a persistent id ``('storage', torch.<T>Storage, key, location, numel)``
    data/<key>     each storage's bytes, little-endian, 64-byte aligned in the file
    byteorder      "little";  version  "3"
So loom writes files PyTorch loads, and loads PyTorch's: tensors come back as loom tensors,
parameters as loom.nn.Parameter, torch dtypes / devices / Size as loom's.

Reading unpickles through ``_weights_only.Unpickler`` (only allow-listed globals, the default) or
``FullUnpickler`` (weights_only=False: any global, torch.nn classes mapped to loom.nn's).
"""
import collections
import io
import os
import pickle
import struct
import sys
import zipfile

from . import _C
from . import _weights_only

Tensor = _C.Tensor

# loom dtype name <-> PyTorch's storage class and dtype names.
_STORAGE_OF = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
               "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
               "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE_OF.items()}
_ALIGN = 64


def _dtype_name(dtype):
    return repr(dtype).rsplit(".", 1)[-1]


# ---------------------------------------------------------------------------------------------- names
# What a pickle names with torch's globals. Each stands for its torch name when written (the
# pickler emits GLOBAL 'module name' for it) and is what the unpickler returns when read.

class TorchName:
    """A torch global as loom writes it: ``module`` and ``name`` go into the pickle as they are."""

    def __init__(self, module, name, value=None):
        self.module, self.name, self.value = module, name, value

    def __call__(self, *args, **kwargs):  # the pickler wants a callable; it is never called
        raise TypeError(f"{self!r} names a PyTorch global for the pickle only")

    def __repr__(self):
        return f"<torch global {self.module}.{self.name}>"


class StorageType:
    """torch.<T>Storage: the dtype of a storage's elements (torch.UntypedStorage: bytes)."""

    def __init__(self, name):
        self.name = name
        self.dtype = getattr(_C, _DTYPE_OF_STORAGE.get(name, "uint8"))

    def __repr__(self):
        return f"torch.{self.name}"


class _Storage:
    """A storage read from an archive: a flat CPU tensor of its elements."""

    def __init__(self, flat):
        self.flat = flat


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2: expected a storage, got {type(storage).__name__}")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2: size {size} and stride {stride} differ in length")
    numel = storage.flat.numel()
    last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) if all(size) else storage_offset - 1
    if storage_offset < 0 or any(st < 0 for st in stride) or (all(size) and last >= numel):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v2: size {size}, stride {stride} and offset {storage_offset} "
                                     f"reach past the storage's {numel} elements")
    t = storage.flat.as_strided(list(size), list(stride), storage_offset)
    return t.requires_grad_() if requires_grad else t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from .nn import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _rebuild_parameter(data, requires_grad)


def _size(dims=()):
    return tuple(dims)


def _device(*args):
    return _C.device(*args)


def _get_layout(name):
    if name != "torch.strided":
        raise pickle.UnpicklingError(f"loom.load: tensor layout {name!r} is not supported (only dense tensors)")
    return name


# The torch globals a checkpoint may name, as loom reads them.
TORCH_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch", "Size"): _size,
    ("torch", "device"): _device,
    ("torch.serialization", "_get_layout"): _get_layout,
}
for _storage_name in list(_DTYPE_OF_STORAGE) + ["UntypedStorage"]:
    TORCH_GLOBALS[("torch", _storage_name)] = StorageType(_storage_name)
for _loom_name in _STORAGE_OF:
    TORCH_GLOBALS[("torch", _loom_name)] = getattr(_C, _loom_name)
TORCH_GLOBALS[("torch", "half")] = _C.float16
TORCH_GLOBALS[("torch", "float")] = _C.float32
TORCH_GLOBALS[("torch", "double")] = _C.float64
TORCH_GLOBALS[("torch", "long")] = _C.int64


# ---------------------------------------------------------------------------------------------- save

# Written as these torch globals.
_REBUILD_TENSOR = TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
_STORAGE_NAMES = {name: TorchName("torch", storage) for name, storage in _STORAGE_OF.items()}
_DTYPE_NAMES = {name: TorchName("torch", name) for name in _STORAGE_OF}
_TORCH_DEVICE = TorchName("torch", "device")


class _Pickler(pickle._Pickler):
    """pickle's Python pickler, writing loom tensors, parameters, dtypes and devices under PyTorch's
    global names (which need not be importable here), and their storages as persistent ids."""

    def __init__(self, file, storages):
        super().__init__(file, protocol=2)
        self.storages = storages  # key -> flat CPU tensor, filled while pickling
        self._storage_keys = {}   # (address, nbytes, dtype, device) -> key

    def save_global(self, obj, name=None):
        if isinstance(obj, TorchName):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            return
        super().save_global(obj, name)

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, TorchName):
            self.save_global(obj)
        elif isinstance(obj, _C.dtype):
            self.save_global(_DTYPE_NAMES[_dtype_name(obj)])
        else:
            super().save(obj, save_persistent_id)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, _C.device):
            return (_TORCH_DEVICE, (obj.type, obj.index) if obj.index is not None else (obj.type,))
        return NotImplemented

    def _reduce_tensor(self, t):
        from .nn import Parameter
        if isinstance(t, Parameter):
            return (_REBUILD_PARAMETER, (t.detach(), t.requires_grad, collections.OrderedDict()))
        t = t.detach()
        name = _dtype_name(t.dtype)
        if name not in _STORAGE_OF:
            raise pickle.PicklingError(f"loom.save: cannot save a tensor of dtype {name}")
        address, nbytes = t._storage_span()
        ident = (address, nbytes, name, str(t.device))
        key = self._storage_keys.get(ident)
        if key is None:
            key = str(len(self.storages))
            self._storage_keys[ident] = key
            numel = nbytes // t.element_size()
            # The whole storage, as PyTorch writes it: views of one storage share a record.
            flat = t.as_strided([numel], [1], 0) if numel else _C.empty(0, dtype=t.dtype)
            self.storages[key] = flat
        numel = self.storages[key].numel()
        location = "cpu" if t.device.type == "cpu" else str(t.device)
        storage_pid = ("storage", _STORAGE_NAMES[name], key, location, numel)
        return (_REBUILD_TENSOR, (_Persistent(storage_pid), t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                                  t.requires_grad, collections.OrderedDict()))

    def persistent_id(self, obj):
        return obj.pid if isinstance(obj, _Persistent) else None


class _Persistent:
    def __init__(self, pid):
        self.pid = pid


def _records(obj, archive):
    """(name, bytes) of every record, in PyTorch's order."""
    storages = {}
    buf = io.BytesIO()
    _Pickler(buf, storages).dump(obj)
    yield f"{archive}/data.pkl", buf.getvalue()
    yield f"{archive}/byteorder", b"little"
    for key, flat in storages.items():
        yield f"{archive}/data/{key}", _storage_bytes(flat)
    yield f"{archive}/version", b"3\n"


def _storage_bytes(flat):
    import numpy as np
    if flat.numel() == 0:
        return b""
    flat = flat.detach().to("cpu").contiguous()
    if _dtype_name(flat.dtype) == "bfloat16":
        # numpy has no bfloat16: widen to float32 (exact) and keep the high 16 bits.
        arr = (flat.float().numpy().view("<u4") >> np.uint32(16)).astype("<u2")
    else:
        arr = flat.numpy()
    return arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()


def save(obj, f):
    """Writes obj in PyTorch's zip format to f (a path or a binary file)."""
    if hasattr(f, "write"):
        _write_zip(obj, f, "archive")
        return
    path = os.fspath(f)
    with open(path, "wb") as out:
        _write_zip(obj, out, os.path.splitext(os.path.basename(path))[0] or "archive")


def _write_zip(obj, out, archive):
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, data in _records(obj, archive):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            # Pad the local header's extra field so the record's data is 64-byte aligned (what
            # PyTorch's reader needs to map storages in place).
            start = out.tell() if out.seekable() else None
            if start is not None:
                header = 30 + len(name.encode("utf-8"))
                pad = (-(start + header + 4)) % _ALIGN
                info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # 'FB', as PyTorch's writer
            z.writestr(info, data)


# ---------------------------------------------------------------------------------------------- load

def is_zip(data):
    return data[:4] == b"PK\x03\x04"


def load_bytes(data, map_location=None, weights_only=True):
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as e:
        raise ValueError(f"loom.load: not a valid PyTorch zip checkpoint: {e}") from None
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1] or \
          [n for n in names if n == "data.pkl"]
    if not pkl:
        raise ValueError("loom.load: the zip archive has no data.pkl record: not a torch.save checkpoint")
    prefix = pkl[0][: -len("data.pkl")]
    byteorder = z.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else "little"
    if byteorder not in ("little", "big"):
        raise ValueError(f"loom.load: unknown byteorder record {byteorder!r}")
    loaded = {}

    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"loom.load: unknown persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, StorageType):
            raise pickle.UnpicklingError(f"loom.load: {storage_type!r} is not a storage type")
        if key not in loaded:
            record = f"{prefix}data/{key}"
            if record not in names:
                raise pickle.UnpicklingError(f"loom.load: the checkpoint names storage {key!r} but has no {record}")
            loaded[key] = _Storage(_flat_tensor(z.read(record), storage_type, byteorder, record,
                                                _target_device(map_location, location)))
        return loaded[key]

    unpickler_class = _weights_only.Unpickler if weights_only else FullUnpickler
    unpickler = unpickler_class(io.BytesIO(z.read(prefix + "data.pkl")))
    unpickler.persistent_load = persistent_load
    return unpickler.load()


def _flat_tensor(raw, storage_type, byteorder, record, device):
    import numpy as np
    name = _dtype_name(storage_type.dtype)
    np_name = {"bfloat16": "uint16"}.get(name, name)
    order = "<" if byteorder == "little" else ">"
    np_dtype = np.dtype(np_name).newbyteorder(order) if np_name != "bool" else np.dtype(np.bool_)
    if len(raw) % np_dtype.itemsize:
        raise pickle.UnpicklingError(f"loom.load: {record} has {len(raw)} bytes, not a whole number of "
                                     f"{np_dtype.itemsize}-byte {name} elements")
    arr = np.frombuffer(raw, dtype=np_dtype)
    if name == "bfloat16":
        # The bits are a float32's high half: widen exactly, then round-trip to bfloat16 exactly.
        arr = (arr.astype("<u4") << np.uint32(16)).view("<f4")
    flat = _C.tensor(arr.astype(arr.dtype.newbyteorder("="), copy=False))
    if name == "bfloat16":
        flat = flat.to(_C.bfloat16)
    return flat if device is None else flat.to(device)


def _target_device(map_location, location):
    """Where a storage saved at `location` loads: map_location as torch.load reads it (None: the CPU
    for cpu storages, the saved device otherwise)."""
    if map_location is None:
        return None if location == "cpu" else location
    if isinstance(map_location, dict):
        return map_location.get(location, None if location == "cpu" else location)
    if callable(map_location):
        raise TypeError("loom.load: a callable map_location is not supported; pass a device, a name or a dict")
    return map_location


class FullUnpickler(pickle.Unpickler):
    """weights_only=False: any global (the file can run code), torch's mapped to loom's."""

    def find_class(self, module, name):
        hit = TORCH_GLOBALS.get((module, name))
        if hit is not None:
            return hit
        if module.startswith("torch.nn") or module == "torch.optim" or module.startswith("torch.optim."):
            import loom
            mapped = _mapped(loom, module, name)
            if mapped is not None:
                return mapped
        return super().find_class(module, name)


def _mapped(loom, module, name):
    """torch.nn.modules.linear.Linear -> loom.nn.Linear (by the class name in loom.nn / loom.optim)."""
    for where in (loom.nn, loom.optim):
        if hasattr(where, name):
            return getattr(where, name)
    return None
