"""loom.save / loom.load in PyTorch's zip format: checkpoints written by PyTorch load into loom with
PyTorch unimportable, loom's load into PyTorch, any picklable object round-trips, and a weights_only
load (the default) never runs code a file names."""
import collections
import io
import os
import pickle
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import loom
import loom.nn as nn

HAVE_TORCH = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch writes / reads the other side")


def run_py(code, *args):
    """Runs `code` in a fresh interpreter (sys.argv[1:] = args); returns its stdout."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], capture_output=True,
                       text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


TORCH_WRITES = """
    import sys, torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 4)).sum().backward()
    opt.step()
    base = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    torch.save({
        "model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 7, "loss": 0.25,
        "name": "run-1", "flags": (True, None), "tags": ["a", "b"],
        "view": base[:, 1:3], "same": base, "transposed": base.t(),
        "half": torch.tensor([1.5, -2.0], dtype=torch.float16), "bf16": torch.tensor([1.5, 3.0], dtype=torch.bfloat16),
        "ints": torch.tensor([1, -2], dtype=torch.int32), "mask": torch.tensor([True, False]),
        "bytes": torch.tensor([0, 255], dtype=torch.uint8), "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0, 3), "param": torch.nn.Parameter(torch.ones(2)),
        "size": torch.Size([2, 3]), "dtype": torch.float16, "device": torch.device("cpu"),
    }, sys.argv[1])
    # What the loom side compares against, as plain lists.
    print(repr({k: v.tolist() for k, v in model.state_dict().items()}))
    print(repr({k: v["exp_avg"].tolist() for k, v in opt.state_dict()["state"].items()}))
"""


@needs_torch
def test_a_pytorch_checkpoint_loads_with_pytorch_unimportable(tmp_path):
    path = tmp_path / "torch_ckpt.pt"
    state_lists, exp_avgs = run_py(TORCH_WRITES, path).splitlines()
    out = run_py("""
        import sys
        sys.modules["torch"] = None  # any import of torch now fails
        import loom
        ck = loom.load(sys.argv[1])
        assert type(ck["model"]).__name__ == "OrderedDict" and ck["model"]._metadata is not None
        print(repr({k: v.tolist() for k, v in ck["model"].items()}))
        print(repr({k: v["exp_avg"].tolist() for k, v in ck["optimizer"]["state"].items()}))
        print(repr([ck["epoch"], ck["loss"], ck["name"], ck["flags"], ck["tags"], ck["size"], str(ck["dtype"]),
                    ck["device"].type, ck["half"].tolist(), ck["bf16"].float().tolist(), ck["ints"].tolist(),
                    ck["mask"].tolist(), ck["bytes"].tolist(), ck["scalar"].item(), tuple(ck["empty"].shape),
                    type(ck["param"]).__name__, ck["param"].requires_grad, str(ck["half"].dtype), str(ck["bf16"].dtype)]))
        print(repr([ck["view"].tolist(), ck["transposed"].tolist(), ck["view"].stride()]))
        ck["same"][0, 1] = 100.0  # views of one storage still share it
        print(ck["view"][0, 0].item(), ck["transposed"][1, 0].item())
    """, path)
    lines = out.splitlines()
    assert lines[0] == state_lists and lines[1] == exp_avgs
    assert eval(lines[2]) == [7, 0.25, "run-1", (True, None), ["a", "b"], (2, 3), "loom.float16", "cpu",
                              [1.5, -2.0], [1.5, 3.0], [1, -2], [True, False], [0, 255], 3.5, (0, 3),
                              "Parameter", True, "loom.float16", "loom.bfloat16"]
    base = np.arange(12.0).reshape(3, 4)
    view, transposed, stride = eval(lines[3])
    assert view == base[:, 1:3].tolist() and transposed == base.T.tolist() and stride == (4, 1)
    assert lines[4] == "100.0 100.0"


@needs_torch
def test_a_pytorch_state_dict_trains_on_in_loom(tmp_path):
    path = tmp_path / "sd.pt"
    run_py("""
        import sys, torch
        torch.manual_seed(1)
        m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        for _ in range(2):
            opt.zero_grad(); torch.nn.functional.mse_loss(m(x), y).backward(); opt.step()
        torch.save({"model": m.state_dict(), "opt": opt.state_dict(), "x": x, "y": y}, sys.argv[1])
        opt.zero_grad(); torch.nn.functional.mse_loss(m(x), y).backward(); opt.step()
        print(torch.nn.functional.mse_loss(m(x), y).item())
    """, path)
    want = float(run_py("""
        import sys, torch
        ck = torch.load(sys.argv[1])
        m = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        m.load_state_dict(ck["model"])
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        opt.load_state_dict(ck["opt"])
        opt.zero_grad(); torch.nn.functional.mse_loss(m(ck["x"]), ck["y"]).backward(); opt.step()
        print(torch.nn.functional.mse_loss(m(ck["x"]), ck["y"]).item())
    """, path))
    ck = loom.load(path)
    m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    m.load_state_dict(ck["model"])
    opt = loom.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    opt.load_state_dict(ck["opt"])
    opt.zero_grad()
    nn.functional.mse_loss(m(ck["x"]), ck["y"]).backward()
    opt.step()
    got = nn.functional.mse_loss(m(ck["x"]), ck["y"]).item()
    assert got == pytest.approx(want, rel=1e-5)


@needs_torch
def test_pytorch_loads_what_loom_saves(tmp_path):
    loom.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    opt = loom.optim.Adam(m.parameters())
    m(loom.randn(2, 3)).sum().backward()
    opt.step()
    base = loom.arange(6, dtype=loom.float32).view(2, 3)
    path = tmp_path / "from_loom.pt"
    loom.save({"model": m.state_dict(), "opt": opt.state_dict(), "t": base.t(), "row": base[1],
               "bf16": loom.tensor([1.5, -3.0], dtype=loom.bfloat16), "step": 5, "dtype": loom.float16}, path)
    out = run_py("""
        import sys, torch
        # PyTorch 1.13's weights_only reader lacks pickle's float opcode (its own optimizer states fail).
        ck = torch.load(sys.argv[1], weights_only=not torch.__version__.startswith("1."))
        m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
        m.load_state_dict(ck["model"])
        print(repr([ck["t"].tolist(), ck["row"].tolist(), ck["t"].stride(), ck["bf16"].float().tolist(), ck["step"],
                    str(ck["dtype"]), ck["model"]["0.weight"].tolist(), sorted(ck["opt"]["state"][0])]))
    """, path)
    t, row, stride, bf16, step, dtype, w0, opt_keys = eval(out)
    assert t == [[0, 3], [1, 4], [2, 5]] and row == [3, 4, 5] and stride == (1, 3)
    assert bf16 == [1.5, -3.0] and step == 5 and dtype == "torch.float16"
    np.testing.assert_allclose(w0, m[0].weight.tolist(), rtol=0, atol=0)
    assert opt_keys == ["exp_avg", "exp_avg_sq", "step"]


def test_any_picklable_object_round_trips(tmp_path):
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    path = tmp_path / "model.pt"
    loom.save(m, path)
    back = loom.load(path, weights_only=False)
    assert type(back) is nn.Sequential and back[0].weight.tolist() == m[0].weight.tolist()
    x = loom.randn(4, 2)
    assert back(x).tolist() == m(x).tolist()
    with pytest.raises(pickle.UnpicklingError, match="loom.nn.modules.container.Sequential"):
        loom.load(path)  # weights_only by default: a Module is code


def test_numpy_arrays_python_values_and_shared_tensors(tmp_path):
    shared = loom.ones(3)
    obj = {"arr": np.arange(6, dtype=np.int16).reshape(2, 3), "f": np.float64(2.5), "set": {1, 2},
           "bytes": b"\x00\xff", "c": 1 + 2j, "od": collections.OrderedDict(a=1), "a": shared, "b": shared,
           "nested": [{"t": loom.zeros(2, dtype=loom.int64)}, (None, 3)]}
    buf = io.BytesIO()
    loom.save(obj, buf)
    back = loom.load(io.BytesIO(buf.getvalue()))
    assert back["arr"].dtype == np.int16 and back["arr"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back["f"] == 2.5 and back["set"] == {1, 2} and back["bytes"] == b"\x00\xff" and back["c"] == 1 + 2j
    assert back["od"] == collections.OrderedDict(a=1) and back["nested"][1] == (None, 3)
    back["a"][0] = 7.0  # one tensor saved twice is one storage, as in PyTorch
    assert back["b"][0].item() == 7.0
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert names[0] == "archive/data.pkl" and "archive/version" in names and "archive/byteorder" in names


def test_records_are_64_byte_aligned(tmp_path):
    path = tmp_path / "aligned.pt"
    loom.save({"w": loom.randn(7), "b": loom.randn(3, 3, dtype=loom.float64)}, path)
    z = zipfile.ZipFile(path)
    data = path.read_bytes()
    for info in z.infolist():
        if "/data/" in info.filename:
            name_len, extra_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little"), \
                int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0


class Harmless:
    """A user class a checkpoint may hold."""

    def __init__(self, v=0):
        self.v = v


def test_weights_only_refuses_code_and_names_the_global(tmp_path):
    sentinel = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return os.system, (f"touch {sentinel}",)

    path = tmp_path / "evil.pt"
    loom.save({"w": loom.ones(1), "x": Evil()}, path)
    with pytest.raises(pickle.UnpicklingError, match=r"global (posix|os)\.system.*weights_only=False"):
        loom.load(path)
    assert not sentinel.exists()


def test_safe_globals_allow_a_user_class(tmp_path):
    path = tmp_path / "user.pt"
    loom.save({"h": Harmless(3)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Harmless"):
        loom.load(path)
    with loom.serialization.safe_globals([Harmless]):
        assert loom.load(path)["h"].v == 3
    with pytest.raises(pickle.UnpicklingError):
        loom.load(path)
    loom.serialization.add_safe_globals([Harmless])
    try:
        assert Harmless in loom.serialization.get_safe_globals()
        assert loom.load(path)["h"].v == 3
    finally:
        loom.serialization.clear_safe_globals()


def test_map_location_and_format_choice(tmp_path):
    path = tmp_path / "m.pt"
    loom.save({"w": loom.ones(2)}, path)
    assert loom.load(path, map_location="sim")["w"].device.type == "sim"
    assert loom.load(path, map_location={"cpu": "sim"})["w"].device.type == "sim"
    assert zipfile.is_zipfile(path)
    st = tmp_path / "m.safetensors"
    loom.save({"w": loom.ones(2)}, st)
    assert not zipfile.is_zipfile(st) and loom.load(st)["w"].tolist() == [1.0, 1.0]
    buf = io.BytesIO()
    loom.save({"w": loom.ones(2)}, buf, format="safetensors")
    assert loom.load(io.BytesIO(buf.getvalue()))["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="format"):
        loom.save({}, buf, format="onnx")


def test_broken_archives_raise_value_errors_naming_the_problem(tmp_path):
    good = io.BytesIO()
    loom.save({"w": loom.arange(4.0)}, good)
    z_in = zipfile.ZipFile(io.BytesIO(good.getvalue()))

    def rewritten(storage_bytes):
        """The archive with record data/0 replaced by storage_bytes(its bytes) (None: left out)."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z_out:
            for n in z_in.namelist():
                data = storage_bytes(z_in.read(n)) if n.endswith("data/0") else z_in.read(n)
                if data is not None:
                    z_out.writestr(n, data)
        return io.BytesIO(out.getvalue())

    with pytest.raises(pickle.UnpicklingError, match="no archive/data/0"):
        loom.load(rewritten(lambda b: None))
    with pytest.raises(pickle.UnpicklingError, match="reach past the storage's 2 elements"):
        loom.load(rewritten(lambda b: b[:8]))
    with pytest.raises(pickle.UnpicklingError, match="6 bytes, not a whole number of 4-byte float32"):
        loom.load(rewritten(lambda b: b[:6]))
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z_out:
        z_out.writestr("notes.txt", "not a checkpoint")
    with pytest.raises(ValueError, match="no data.pkl"):
        loom.load(io.BytesIO(other.getvalue()))
    with pytest.raises(ValueError, match="not a valid PyTorch zip"):
        loom.load(io.BytesIO(b"PK\x03\x04 truncated"))
    with pytest.raises(ValueError, match="legacy"):
        loom.load(io.BytesIO(pickle.dumps({"a": 1}, protocol=2)))
