"""loom.save / loom.load in the safetensors format (format="safetensors", or a .safetensors path), checked
against a small independent reader and writer. PyTorch's format: test_torch_checkpoints.py."""
import io
import json
import struct

import numpy as np
import pytest

import loom

NP_OF = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
         "U8": "u1", "BOOL": "?"}


def read_safetensors(data):
    """An independent reader (spec: 8-byte LE header length, JSON header, raw LE data)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", None)
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        if info["dtype"] == "BF16":
            arr = (np.frombuffer(raw, "<u2").astype("<u4") << 16).view("<f4")
        else:
            arr = np.frombuffer(raw, NP_OF[info["dtype"]])
        out[name] = (info["dtype"], arr.reshape(info["shape"]))
    return out, meta


def write_safetensors(tensors, metadata=None):
    """An independent writer: {name: (dtype code, numpy array)} -> bytes."""
    header, blobs, pos = {}, [], 0
    for name, (code, arr) in tensors.items():
        raw = np.ascontiguousarray(arr).astype(NP_OF[code]).tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [pos, pos + len(raw)]}
        blobs.append(raw)
        pos += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def _save_bytes(obj, **kwargs):
    buf = io.BytesIO()
    loom.save(obj, buf, format="safetensors", **kwargs)
    return buf.getvalue()


ALL_DTYPES = [("float32", "F32"), ("float64", "F64"), ("float16", "F16"), ("bfloat16", "BF16"), ("int64", "I64"),
              ("int32", "I32"), ("int16", "I16"), ("int8", "I8"), ("uint8", "U8"), ("bool", "BOOL")]


@pytest.mark.parametrize("name,code", ALL_DTYPES)
def test_every_dtype_round_trips_and_reads_independently(name, code, tmp_path):
    values = [[0, 1, -2], [3, 100, -128]] if name != "uint8" else [[0, 1, 2], [3, 100, 255]]
    if name == "bool":
        values = [[True, False, True], [False, False, True]]
    if name in ("float32", "float64", "float16", "bfloat16"):
        values = [[0.5, -1.25, 3.0], [1e-3, 65504.0 if name == "float16" else 1e30, -0.0]]
    t = loom.tensor(values, dtype=getattr(loom, name))
    path = tmp_path / "t.safetensors"
    loom.save({"w": t}, path)
    data = path.read_bytes()
    tensors, meta = read_safetensors(data)
    assert meta is None and tensors["w"][0] == code
    np.testing.assert_array_equal(tensors["w"][1].astype(np.float64), np.array(t.float().tolist(), np.float64)
                                  if name == "bfloat16" else np.array(t.tolist(), np.float64))
    back = loom.load(path)
    assert list(back) == ["w"] and back["w"].dtype is t.dtype and back["w"].tolist() == t.tolist()


def test_header_is_aligned_and_byte_exact():
    data = _save_bytes({"a": loom.tensor([1.0, 2.0]), "b": loom.tensor([[7]], dtype=loom.int32)})
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0 and data[8:8 + n].rstrip(b" ").endswith(b"}")
    head = json.loads(data[8:8 + n])
    assert head == {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "I32", "shape": [1, 1], "data_offsets": [8, 12]}}
    assert data[8 + n:] == struct.pack("<ffi", 1.0, 2.0, 7)


def test_single_tensor_and_metadata():
    t = loom.arange(6.0).reshape(2, 3)
    data = _save_bytes(t, metadata={"format": "pt", "note": "x"})
    tensors, meta = read_safetensors(data)
    assert list(tensors) == ["__tensor__"] and meta == {"format": "pt", "note": "x"}
    back = loom.load(io.BytesIO(data))
    assert isinstance(back, loom.Tensor) and back.shape == (2, 3) and back.tolist() == t.tolist()
    with pytest.raises(TypeError, match="metadata"):
        loom.save(t, io.BytesIO(), metadata={"a": 1})
    with pytest.raises(ValueError, match="reserved"):
        loom.save(t, io.BytesIO(), metadata={"loom.structure": "{}"})


def test_non_contiguous_zero_size_and_scalar_tensors():
    base = loom.arange(12.0).reshape(3, 4)
    obj = {"t": base.t(), "n": base.narrow(0, 1, 2), "empty": loom.zeros(0, 3), "s": loom.tensor(2.5),
           "g": loom.ones(2, requires_grad=True)}
    back = loom.load(io.BytesIO(_save_bytes(obj)))
    assert back["t"].tolist() == base.t().tolist() and back["n"].tolist() == base.narrow(0, 1, 2).tolist()
    assert back["empty"].shape == (0, 3) and back["s"].shape == () and back["s"].item() == 2.5
    assert not back["g"].requires_grad


def test_reads_a_file_from_another_writer():
    arrays = {"layer.0.weight": ("F32", np.arange(6, dtype=np.float32).reshape(2, 3)),
              "layer.0.bias": ("F16", np.array([1.5, -2], np.float16)),
              "ids": ("I64", np.array([[1, 2]], np.int64))}
    data = write_safetensors(arrays, metadata={"format": "pt"})
    back = loom.load(io.BytesIO(data))
    assert set(back) == set(arrays)
    for name, (_, arr) in arrays.items():
        assert back[name].shape == arr.shape and back[name].tolist() == arr.tolist()
    assert back["layer.0.bias"].dtype is loom.float16


def test_nested_checkpoints_round_trip_and_stay_readable():
    p = [loom.randn(3, 2, requires_grad=True), loom.randn(4, requires_grad=True)]
    opt = loom.optim.Adam(p, lr=0.01)
    (p[0].sum() + (p[1] ** 2).sum()).backward()
    opt.step()
    ckpt = {"model": {"fc.weight": p[0].detach(), "fc.bias": p[1].detach()}, "optimizer": opt.state_dict(),
            "epoch": 3, "history": [0.5, float("inf")], "pair": (1, "a"), "none": None, 7: True}
    data = _save_bytes(ckpt)
    tensors, meta = read_safetensors(data)
    assert "model.fc.weight" in tensors and "optimizer.state.0.exp_avg" in tensors and "loom.structure" in meta
    back = loom.load(io.BytesIO(data))
    assert back["model"]["fc.weight"].tolist() == p[0].tolist()
    assert back["epoch"] == 3 and back["history"] == [0.5, float("inf")] and back["pair"] == (1, "a")
    assert back["none"] is None and back[7] is True
    assert back["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert back["optimizer"]["state"][1]["exp_avg"].tolist() == opt.state[p[1]]["exp_avg"].tolist()
    fresh = loom.optim.Adam(p, lr=0.5)
    fresh.load_state_dict(back["optimizer"])
    assert fresh.param_groups[0]["lr"] == 0.01 and fresh.state[p[0]]["step"] == 1.0
    with pytest.raises(TypeError, match="cannot store an object of type set"):
        loom.save({"x": {1, 2}}, io.BytesIO(), format="safetensors")


def test_save_to_path_and_map_location(tmp_path):
    path = str(tmp_path / "m.safetensors")
    loom.save({"w": loom.ones(2)}, path)
    assert loom.load(path, map_location="cpu")["w"].device.type == "cpu"


def _file(header, payload=b"", header_len=None):
    head = json.dumps(header).encode() if isinstance(header, dict) else header
    return struct.pack("<Q", len(head) if header_len is None else header_len) + head + payload


F32_2 = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
BAD_FILES = [
    (b"\x01\x02", "fewer than the 8-byte header length"),
    (_file({"a": F32_2}, b"\0" * 8, header_len=10 ** 6), "runs past the end"),
    (_file({"a": F32_2}, b"\0" * 8, header_len=2 ** 63), "larger than"),
    (_file(b"[1, 2]"), "not a JSON object"),
    (_file(b"{not json"), "not valid JSON"),
    (_file(b'{"a": 1, "a": 2}'), "duplicate key"),
    (_file({"a": dict(F32_2, dtype="F8_E4M3")}, b"\0" * 8), "unknown dtype 'F8_E4M3'"),
    (_file({"a": dict(F32_2, shape=[2, -1])}, b"\0" * 8), "not a list of non-negative integers"),
    (_file({"a": dict(F32_2, data_offsets=[0, 800])}, b"\0" * 8), "run past the end of the 8-byte data buffer"),
    (_file({"a": dict(F32_2, data_offsets=[4, 0])}, b"\0" * 8), "0 <= begin <= end"),
    (_file({"a": dict(F32_2, shape=[3])}, b"\0" * 8), "8 bytes for dtype F32 and shape \\[3\\] \\(expected 12\\)"),
    (_file({"a": F32_2, "b": F32_2}, b"\0" * 16), "overlaps the previous tensor"),
    (_file({"a": dict(F32_2, data_offsets=[8, 16])}, b"\0" * 16), "leaves a gap of 8 bytes"),
    (_file({"a": F32_2}, b"\0" * 12), "has 12 bytes but its tensors cover 8"),
    (_file({"a": dict(F32_2, data_offsets=[0])}, b"\0" * 8), "is not \\[begin, end\\]"),
    (_file({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), "has no 'data_offsets'"),
    (_file({"__metadata__": {"k": 1}}), "__metadata__ must map strings to strings"),
    (_file({"__metadata__": {"loom.structure": "{\"T\": \"missing\"}"}}), "no tensor named 'missing'"),
]


@pytest.mark.parametrize("data,message", BAD_FILES, ids=[m for _, m in BAD_FILES])
def test_malformed_files_raise_value_error(data, message):
    with pytest.raises(ValueError, match=message):
        loom.load(io.BytesIO(data))


def test_truncated_files_never_read_out_of_bounds():
    data = _save_bytes({"a": loom.arange(10.0), "b": loom.ones(3, dtype=loom.int64)})
    for cut in range(len(data)):
        with pytest.raises(ValueError):
            loom.load(io.BytesIO(data[:cut]))


def test_cross_check_with_the_safetensors_package_when_present(tmp_path):
    st = pytest.importorskip("safetensors.numpy", reason="the safetensors package is not installed")
    path = str(tmp_path / "x.safetensors")
    loom.save({"a": loom.arange(6.0).reshape(2, 3), "b": loom.tensor([1, 2], dtype=loom.int16)}, path)
    arrays = st.load_file(path)
    assert arrays["a"].tolist() == [[0, 1, 2], [3, 4, 5]] and arrays["b"].dtype == np.int16
    st.save_file({"c": np.eye(2, dtype=np.float64)}, path)
    assert loom.load(path)["c"].tolist() == [[1, 0], [0, 1]]
