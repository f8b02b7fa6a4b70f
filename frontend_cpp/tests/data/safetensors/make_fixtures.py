#!/usr/bin/python3
"""Writes the safetensors fixture files in this folder with nothing but struct and json.

The files are the C++ reader's known-good inputs (frontend_cpp/tests/io_fixture_test.cpp)
and the seed corpus of its fuzzer. Their tensors follow frontend_cpp/tests/io_test_tensors.h:
element i is (i - 2) / 2 for floats, i - 2 for signed, i for unsigned, i % 2 for bool.

  python_state_dict.safetensors  laid out as Python's loom.save writes a dict: insertion order
                                 (so some tensors are misaligned), "__metadata__" last
  python_tensor.safetensors      loom.save(tensor): one tensor named "__tensor__"
  reference_layout.safetensors   the safetensors library's own test vector (one F32 tensor)
  empty.safetensors              no tensors: "{}" padded to 8 bytes
  metadata_only.safetensors      no tensors, {"__metadata__": {"framework": "pt"}}

Run it from this folder: /usr/bin/python3 make_fixtures.py (io_python_crosscheck.py imports
SPECS and value() from here).
"""
import json
import struct

# (name, safetensors dtype, shape), as io_test_tensors.h's specs()
SPECS = [("u8", "U8", [3]), ("f32", "F32", [2, 3]), ("f64", "F64", [2, 2]), ("f16", "F16", [5]),
         ("bf16", "BF16", [2, 2]), ("i64", "I64", [3]), ("i32", "I32", [1, 3]), ("i16", "I16", [4]),
         ("i8", "I8", [2, 2]), ("flag", "BOOL", [5]), ("scalar", "F32", []), ("empty", "F32", [0, 4])]
PACK = {"F64": "<d", "F32": "<f", "F16": "<e", "I64": "<q", "I32": "<i", "I16": "<h", "I8": "<b",
        "U8": "<B", "BOOL": "<?"}


def value(code, i):
    if code in ("F64", "F32", "F16", "BF16"):
        return (i - 2) / 2
    if code == "BOOL":
        return i % 2 == 1
    if code == "U8":
        return i
    return i - 2


def tensor_bytes(code, shape):
    n = 1
    for d in shape:
        n *= d
    if code == "BF16":  # the high half of the float32 (exact for these values)
        return b"".join(struct.pack("<H", struct.unpack("<I", struct.pack("<f", value(code, i)))[0] >> 16)
                        for i in range(n))
    return b"".join(struct.pack(PACK[code], value(code, i)) for i in range(n))


def write(path, tensors, metadata=None, metadata_first=False):
    """tensors: [(name, code, shape, bytes)] in file order."""
    header, offset = {}, 0
    if metadata and metadata_first:
        header["__metadata__"] = metadata
    for name, code, shape, data in tensors:
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    if metadata and not metadata_first:
        header["__metadata__"] = metadata
    head = json.dumps(header, separators=(",", ":")).encode("utf-8")
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(t[3] for t in tensors))


def main():
    write("python_state_dict.safetensors",
          [(name, code, shape, tensor_bytes(code, shape)) for name, code, shape in SPECS],
          {"written_by": "make_fixtures.py", "epoch": "3"})
    write("python_tensor.safetensors", [("__tensor__", "F32", [2, 3], tensor_bytes("F32", [2, 3]))])
    write("reference_layout.safetensors",
          [("attn.0", "F32", [1, 2, 3], b"".join(struct.pack("<f", v) for v in range(6)))])
    write("empty.safetensors", [])
    write("metadata_only.safetensors", [], {"framework": "pt"}, metadata_first=True)


if __name__ == "__main__":
    main()
