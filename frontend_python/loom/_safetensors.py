"""The safetensors format of loom.save / loom.load (``format="safetensors"``, or a path ending in
".safetensors").

File layout (https://github.com/huggingface/safetensors):
    8 bytes      N, the header length, unsigned little-endian
    N bytes      JSON: {name: {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
                        "__metadata__": {str: str}}   (padded with spaces to a multiple of 8)
    the rest     every tensor's bytes, little-endian, row-major, at its offsets (relative to here)

A flat dict {str: Tensor} is a plain safetensors file that any reader loads. A single tensor is
stored under the reserved name "__tensor__". Anything else built of dicts, lists, tuples, numbers,
strings, None and tensors (model + optimizer checkpoints) keeps its tensors as entries named by
their dotted path and its structure as JSON in the metadata key "loom.structure".
"""
import ctypes
import json
import os
import struct

from . import _C

Tensor = _C.Tensor

TENSOR_KEY = "__tensor__"
STRUCTURE_KEY = "loom.structure"
_MAX_HEADER = 100 * 1024 * 1024  # as the safetensors library: a bigger header is a broken file

# safetensors dtype name -> (loom dtype name, numpy little-endian dtype, item size)
_DTYPES = {
    "F64": ("float64", "<f8", 8), "F32": ("float32", "<f4", 4), "F16": ("float16", "<f2", 2),
    "BF16": ("bfloat16", "<u2", 2), "I64": ("int64", "<i8", 8), "I32": ("int32", "<i4", 4),
    "I16": ("int16", "<i2", 2), "I8": ("int8", "i1", 1), "U8": ("uint8", "u1", 1), "BOOL": ("bool", "?", 1),
}
_CODE_OF = {loom_name: code for code, (loom_name, _, _) in _DTYPES.items()}
# Each dtype's position in the safetensors library's Dtype enum, which orders the tensors in a
# file (the same table as frontend_cpp/src/io/safetensors_dtypes.h).
_RANK = {"BOOL": 0, "U8": 1, "I8": 2, "I16": 5, "F16": 7, "BF16": 8, "I32": 9, "F32": 11, "F64": 12, "I64": 13}


def _rank(t):
    return _RANK.get(_CODE_OF.get(_dtype_name(t.dtype)), -1)


def _dtype_name(dtype):
    return repr(dtype).rsplit(".", 1)[-1]  # "loom.float32" -> "float32"


# ---------------------------------------------------------------------------------------------- save

def save(obj, f, metadata=None):
    """Writes `obj` (a Tensor, a dict of tensors, or a nested checkpoint) to `f` (path or binary file)
    as safetensors.

    `metadata` (str -> str) goes into the file's "__metadata__"."""
    tensors = {}
    structure = None
    if isinstance(obj, Tensor):
        tensors[TENSOR_KEY] = obj
    elif isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items()):
        tensors = dict(obj)
        if TENSOR_KEY in tensors:
            raise ValueError("the name {!r} is reserved for a single saved tensor".format(TENSOR_KEY))
    else:
        structure = _encode(obj, "", tensors)

    meta = {}
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise TypeError("metadata must be a dict of str -> str")
        if STRUCTURE_KEY in metadata:
            raise ValueError("metadata key {!r} is reserved for loom.save".format(STRUCTURE_KEY))
        meta.update(metadata)
    if structure is not None:
        meta[STRUCTURE_KEY] = json.dumps(structure, separators=(",", ":"))

    # The safetensors library's layout, so files are byte-identical to its own and to
    # loom::io's: "__metadata__" first, then tensors by descending dtype rank, then name.
    header, blobs, offset = {}, [], 0
    if meta:
        header["__metadata__"] = {k: meta[k] for k in sorted(meta)}
    for name, t in sorted(tensors.items(), key=lambda kv: (-_rank(kv[1]), kv[0])):
        code = _CODE_OF.get(_dtype_name(t.dtype))
        if code is None:
            raise TypeError("cannot save tensor {!r} of dtype {}".format(name, t.dtype))
        data = _tensor_bytes(t, code)
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)

    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    head += b" " * (-len(head) % 8)  # align the data to 8 bytes, as the reference writer does
    _write(f, [struct.pack("<Q", len(head)), head] + blobs)


def _encode(obj, path, tensors):
    """The JSON skeleton of obj; its tensors go into `tensors` under their dotted path."""
    if isinstance(obj, Tensor):
        name = path or TENSOR_KEY
        while name in tensors or name == "__metadata__":
            name += "_"
        tensors[name] = obj
        return {"T": name}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"V": obj}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (bool, int, float, str))):
                raise TypeError("loom.save: dict keys must be str, int, float, bool or None, but got "
                                + type(k).__name__)
            items.append([k, _encode(v, _join(path, k), tensors)])
        return {"D": items}
    if isinstance(obj, (list, tuple)):
        kind = "L" if isinstance(obj, list) else "U"
        return {kind: [_encode(v, _join(path, i), tensors) for i, v in enumerate(obj)]}
    raise TypeError("loom.save cannot store an object of type " + type(obj).__name__
                    + " (tensors, dicts, lists, tuples, numbers, strings and None can be saved)")


def _join(path, key):
    return "{}.{}".format(path, key) if path else str(key)


def _tensor_bytes(t, code):
    import numpy as np
    t = t.detach()
    if t.device.type != "cpu":
        t = t.to("cpu")
    if code == "BF16":
        # numpy has no bfloat16: widen (exactly) to float32 and keep the high 16 bits.
        bits = _host_array(t.float(), "float32").view("<u4") >> np.uint32(16)
        return bits.astype("<u2").tobytes()
    return _host_array(t, _dtype_name(t.dtype)).astype(_DTYPES[code][1], copy=False).tobytes()


def _host_array(t, name):
    """A numpy copy of CPU tensor t, read from its memory (Tensor.numpy() goes through tolist(),
    far slower; replace with the zero-copy numpy bridge once it exists)."""
    import numpy as np
    t = t.contiguous()
    dtype = np.dtype(name if name != "bool" else np.bool_)
    nbytes = t.numel() * t.element_size()
    if nbytes == 0:
        return np.zeros(tuple(t.shape), dtype=dtype)
    if dtype.itemsize != t.element_size():
        raise RuntimeError("element size of {} is {}, expected {}".format(t.dtype, t.element_size(), dtype.itemsize))
    return np.frombuffer(ctypes.string_at(t.data_ptr(), nbytes), dtype=dtype).reshape(tuple(t.shape))


def _write(f, chunks):
    if hasattr(f, "write"):
        for c in chunks:
            f.write(c)
        return
    with open(os.fspath(f), "wb") as out:
        for c in chunks:
            out.write(c)


# ---------------------------------------------------------------------------------------------- load

def load_bytes(data, map_location=None):
    """Reads what ``save`` wrote (or any safetensors file) from its bytes.

    map_location: a device (or name) to move the tensors to; by default they load on the CPU.
    Raises ValueError naming the problem when the file is malformed."""
    header, base = _parse_header(data)
    meta = header.pop("__metadata__", None)
    tensors = {name: _make_tensor(name, info, data, base, map_location) for name, info in header.items()}
    structure = (meta or {}).get(STRUCTURE_KEY)
    if structure is not None:
        try:
            skeleton = json.loads(structure)
        except ValueError as e:
            raise ValueError("corrupt {!r} metadata: {}".format(STRUCTURE_KEY, e)) from None
        return _decode(skeleton, tensors)
    if list(tensors) == [TENSOR_KEY]:
        return tensors[TENSOR_KEY]
    return tensors


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError("safetensors header has duplicate key {!r}".format(k))
        out[k] = v
    return out


def _parse_header(data):
    """The validated header dict and the offset where the tensor bytes begin."""
    if len(data) < 8:
        raise ValueError("not a safetensors file: {} bytes, fewer than the 8-byte header length".format(len(data)))
    (n,) = struct.unpack_from("<Q", data, 0)
    if n > _MAX_HEADER:
        raise ValueError("safetensors header length {} is larger than the {} byte limit".format(n, _MAX_HEADER))
    if 8 + n > len(data):
        raise ValueError("safetensors header length {} runs past the end of the {}-byte file".format(n, len(data)))
    raw = bytes(data[8:8 + n])
    if not raw.startswith(b"{"):
        raise ValueError("safetensors header is not a JSON object")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError as e:
        raise ValueError("safetensors header is not UTF-8: {}".format(e)) from None
    except json.JSONDecodeError as e:
        raise ValueError("safetensors header is not valid JSON: {}".format(e)) from None
    if not isinstance(header, dict):
        raise ValueError("safetensors header is not a JSON object")

    meta = header.get("__metadata__")
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise ValueError("safetensors __metadata__ must map strings to strings")

    buffer_len = len(data) - 8 - n
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise ValueError("tensor {!r}: header entry is not an object".format(name))
        for key in ("dtype", "shape", "data_offsets"):
            if key not in info:
                raise ValueError("tensor {!r}: header entry has no {!r}".format(name, key))
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in _DTYPES:
            raise ValueError("tensor {!r}: unknown dtype {!r} (known: {})".format(name, dtype, ", ".join(_DTYPES)))
        if not isinstance(shape, list) or not all(_is_int(d) and d >= 0 for d in shape):
            raise ValueError("tensor {!r}: shape {!r} is not a list of non-negative integers".format(name, shape))
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_int(o) for o in offsets)):
            raise ValueError("tensor {!r}: data_offsets {!r} is not [begin, end]".format(name, offsets))
        begin, end = offsets
        if not 0 <= begin <= end:
            raise ValueError("tensor {!r}: data_offsets {!r} are not 0 <= begin <= end".format(name, offsets))
        if end > buffer_len:
            raise ValueError("tensor {!r}: data_offsets {!r} run past the end of the {}-byte data buffer"
                             .format(name, offsets, buffer_len))
        numel = 1
        for d in shape:
            numel *= d
        expected = numel * _DTYPES[dtype][2]
        if end - begin != expected:
            raise ValueError("tensor {!r}: {} bytes for dtype {} and shape {} (expected {})"
                             .format(name, end - begin, dtype, shape, expected))
        spans.append((begin, end, name))

    # The tensors must tile the buffer exactly: no gaps, no overlaps, nothing after the last one.
    spans.sort()
    pos = 0
    for begin, end, name in spans:
        if begin != pos:
            what = "overlaps the previous tensor" if begin < pos else "leaves a gap of {} bytes".format(begin - pos)
            raise ValueError("tensor {!r}: data_offsets [{}, {}] {}".format(name, begin, end, what))
        pos = end
    if pos != buffer_len:
        raise ValueError("safetensors data buffer has {} bytes but its tensors cover {}".format(buffer_len, pos))
    return header, 8 + n


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _make_tensor(name, info, data, base, map_location):
    import numpy as np
    loom_name, np_dtype, _ = _DTYPES[info["dtype"]]
    begin, end = info["data_offsets"]
    shape = tuple(info["shape"])
    arr = np.frombuffer(data, dtype=np_dtype, count=(end - begin) // np.dtype(np_dtype).itemsize,
                        offset=base + begin)
    if info["dtype"] == "BF16":
        arr = (arr.astype("<u4") << np.uint32(16)).view("<f4")
    arr = arr.astype(arr.dtype.newbyteorder("="), copy=False).reshape(shape)
    t = _C.tensor(arr, dtype=getattr(_C, loom_name))
    if map_location is not None:
        t = t.to(_device_for(map_location))
    return t


def _device_for(map_location):
    if callable(map_location) or isinstance(map_location, dict):
        raise TypeError("loom.load: map_location must be a device or a device name")
    return map_location


def _decode(node, tensors):
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError("corrupt {!r} metadata: bad node {!r}".format(STRUCTURE_KEY, node))
    (kind, value), = node.items()
    if kind == "T":
        if value not in tensors:
            raise ValueError("corrupt {!r} metadata: no tensor named {!r}".format(STRUCTURE_KEY, value))
        return tensors[value]
    if kind == "V":
        return value
    if kind == "D":
        return {k: _decode(v, tensors) for k, v in value}
    if kind == "L":
        return [_decode(v, tensors) for v in value]
    if kind == "U":
        return tuple(_decode(v, tensors) for v in value)
    raise ValueError("corrupt {!r} metadata: unknown node kind {!r}".format(STRUCTURE_KEY, kind))

