"""loom.onnx.export: models written as ONNX (checked by onnx.checker), run by
a reference evaluator on PyTorch's ops (onnx_reference.py), give the traced
model's outputs; ops without an ONNX form are errors naming op and node."""
import math

import numpy as np
import pytest

import loom
import loom.nn as nn
import loom.nn.functional as F

onnx = pytest.importorskip("onnx")
import onnx_reference  # noqa: E402


def outputs_match(proto, model, inputs, names, rtol=1e-4, atol=1e-5):
    with loom.no_grad():
        expected = model(*inputs)
    expected = (expected,) if isinstance(expected, loom.Tensor) else tuple(expected)
    got = onnx_reference.run(proto, {n: x.numpy() for n, x in zip(names, inputs)})
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.float().numpy() if e.dtype == loom.bfloat16 else e.numpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


def test_an_mlp_with_a_dynamic_batch(tmp_path):
    loom.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Softmax(dim=-1))
    path = tmp_path / "mlp.onnx"
    loom.onnx.export(model, (loom.randn(2, 8),), str(path), input_names=["x"], output_names=["probs"],
                     dynamic_axes={"x": {0: "batch"}, "probs": {0: "batch"}}, opset_version=17)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto)
    assert [i.name for i in proto.graph.input] == ["x"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert {n.op_type for n in proto.graph.node} >= {"Gemm", "Relu", "Softmax"}
    for batch in (3, 5):
        outputs_match(proto, model, (loom.randn(batch, 8),), ["x"])


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = F.adaptive_avg_pool2d(F.relu(self.conv2(x)), (1, 1))
        return self.fc(x.flatten(1))


def test_a_cnn_in_eval_mode(tmp_path):
    loom.manual_seed(1)
    model = Cnn()
    with loom.no_grad():  # running statistics that are not 0 and 1
        model.bn.running_mean.copy_(loom.randn(8) * 0.1)
        model.bn.running_var.copy_(loom.rand(8) + 0.5)
    x = loom.randn(2, 3, 16, 16)
    proto = loom.onnx.export(model, (x,), str(tmp_path / "cnn.onnx"), input_names=["image"])
    assert model.training  # restored
    model.eval()
    assert {n.op_type for n in proto.graph.node} >= {"Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool"}
    outputs_match(proto, model, (x,), ["image"])


class Block(nn.Module):
    """A GPT-2-style block: embedding, layer norms, causal attention, the
    tanh GELU written out as nanoGPT does, residuals."""

    def __init__(self, vocab=50, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.wte = nn.Embedding(vocab, dim)
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.out = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, idx):
        x = self.wte(idx)
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(y.transpose(1, 2).contiguous().view(B, T, C)))
        h = self.fc(self.ln2(x))
        h = 0.5 * h * (1.0 + loom.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * loom.pow(h, 3.0))))
        return x + self.out(h)


def test_a_transformer_block_traced_and_fused(tmp_path):
    loom.manual_seed(2)
    model = Block().eval()
    idx = loom.randint(0, 50, (2, 7))
    proto = loom.onnx.export(model, (idx,), str(tmp_path / "block.onnx"), input_names=["idx"])
    outputs_match(proto, model, (idx,), ["idx"], rtol=1e-4, atol=1e-4)
    # A graph optimised by loom (its GELU one _fused node) exports the same.
    traced = loom.jit.trace(model, (idx,))
    traced.graph.optimize()
    assert "_fused" in traced.graph.ops
    proto2 = loom.onnx.export(traced, (idx,), str(tmp_path / "fused.onnx"), input_names=["idx"])
    outputs_match(proto2, model, (idx,), ["idx"], rtol=1e-4, atol=1e-4)


def test_numbers_promote_as_in_loom(tmp_path):
    def f(x):
        return (x * 3 + 1) * 2.5 > 7
    x = loom.arange(6)
    proto = loom.onnx.export(f, (x,), str(tmp_path / "promote.onnx"), input_names=["x"])
    outputs_match(proto, f, (x,), ["x"])


def test_an_op_without_an_onnx_form_is_named(tmp_path):
    def f(x):
        return loom.cumsum(x, 0) + 1
    with pytest.raises(RuntimeError, match=r"loom::cumsum.*no ONNX mapping"):
        loom.onnx.export(f, (loom.randn(4),), str(tmp_path / "bad.onnx"))


def test_the_benchmark_models_export(tmp_path):
    # bench/models' GPT (fused attention, split, tied weights), ResNet-18
    # (in-place ReLUs) and MLP, written against the PyTorch API.
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "models"))
    import gpt
    import mlp
    import resnet
    for mod in (gpt, resnet, mlp):
        cfg = mod.CONFIGS.get("small", mod.CONFIGS["cpu"])
        loom.manual_seed(0)
        model = mod.build(loom, cfg).eval()
        x, _ = mod.batch(loom, cfg, "cpu", np.random.default_rng(0))
        proto = loom.onnx.export(model, (x,), str(tmp_path / f"{mod.NAME}.onnx"), input_names=["x"])
        outputs_match(proto, model, (x,), ["x"], rtol=1e-4, atol=1e-4)


def test_an_in_place_op_exports_as_its_functional_form(tmp_path):
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(inplace=True))
    x = loom.randn(3, 4)
    proto = loom.onnx.export(model, (x,), str(tmp_path / "inplace.onnx"), input_names=["x"])
    assert "Relu" in {n.op_type for n in proto.graph.node}
    outputs_match(proto, model, (x,), ["x"])
