"""Python's loom.save/loom.load and C++'s loom::io read each other's safetensors files.

Run by ctest (frontend.io.python_crosscheck) as
    PYTHONPATH=<build>/python python3 io_python_crosscheck.py <path to loom_io_crosscheck>
The tensors are io_test_tensors.h's (SPECS and value() from data/safetensors/make_fixtures.py).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "safetensors"))
import loom  # noqa: E402
from make_fixtures import SPECS, value  # noqa: E402

DTYPES = {"F64": loom.float64, "F32": loom.float32, "F16": loom.float16, "BF16": loom.bfloat16,
          "I64": loom.int64, "I32": loom.int32, "I16": loom.int16, "I8": loom.int8, "U8": loom.uint8,
          "BOOL": loom.bool}


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def make(code, shape):
    return loom.tensor([value(code, i) for i in range(numel(shape))], dtype=DTYPES[code]).reshape(list(shape))


def flat(values):
    return [x for v in values for x in flat(v)] if isinstance(values, list) else [values]


def mismatch(name, code, shape, t):
    if t.dtype != DTYPES[code]:
        return "{}: dtype {}".format(name, t.dtype)
    if tuple(t.shape) != tuple(shape):
        return "{}: shape {}".format(name, tuple(t.shape))
    got = flat(t.tolist())
    want = [value(code, i) for i in range(numel(shape))]
    return "" if got == want else "{}: values {} != {}".format(name, got, want)


def header_of(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n))


def main():
    exe = sys.argv[1]
    errors = []
    with tempfile.TemporaryDirectory() as d:
        # C++ writes, Python reads.
        subprocess.run([exe, "write", d], check=True)
        sd = loom.load(os.path.join(d, "state_dict.safetensors"))
        if sorted(sd) != sorted(name for name, _, _ in SPECS):
            errors.append("C++ state dict: names {}".format(sorted(sd)))
        for name, code, shape in SPECS:
            if name in sd:
                errors.append(mismatch(name, code, shape, sd[name]))
        if header_of(os.path.join(d, "state_dict.safetensors")).get("__metadata__") != {"from": "c++"}:
            errors.append("C++ state dict: metadata")
        t = loom.load(os.path.join(d, "tensor.safetensors"))
        errors.append(mismatch("C++ tensor", "F32", [2, 3], t) if isinstance(t, loom.Tensor) else "C++ tensor: not a tensor")

        # Both writers follow the safetensors library's layout: the same tensors give the same bytes.
        same = os.path.join(d, "py_same.safetensors")
        loom.save({name: make(code, shape) for name, code, shape in SPECS}, same, metadata={"from": "c++"})
        if open(same, "rb").read() != open(os.path.join(d, "state_dict.safetensors"), "rb").read():
            errors.append("Python's file for the same state dict differs from C++'s byte for byte")
        loom.save(make("F32", [2, 3]), same)
        if open(same, "rb").read() != open(os.path.join(d, "tensor.safetensors"), "rb").read():
            errors.append("Python's single-tensor file differs from C++'s byte for byte")

        # Python writes, C++ reads.
        loom.save({name: make(code, shape) for name, code, shape in SPECS},
                  os.path.join(d, "py_state_dict.safetensors"), metadata={"from": "python"})
        loom.save(make("F32", [2, 3]), os.path.join(d, "py_tensor.safetensors"))
        if subprocess.run([exe, "check", d]).returncode != 0:
            errors.append("C++ could not read Python's files exactly (see above)")
    errors = [e for e in errors if e]
    for e in errors:
        print("FAIL:", e)
    print("ok" if not errors else "{} failures".format(len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
