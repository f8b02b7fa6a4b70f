"""loom.jit: tracing models into graphs, running and parsing them."""
import math

import pytest

import loom
import loom.nn as nn
import loom.nn.functional as F


def mlp():
    loom.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Softmax(dim=-1))


def test_trace_an_mlp_and_run_it_on_new_inputs():
    m = mlp()
    traced = loom.jit.trace(m, loom.randn(3, 8))
    assert traced.graph.ops == ["linear", "relu", "linear", "softmax"]
    assert "param %0.weight : float32[16, 8] @cpu:0" in traced.code
    x = loom.randn(3, 8)
    assert (traced(x) - m(x)).abs().max().item() < 1e-6
    assert set(dict(traced.named_parameters())) == {"0.weight", "0.bias", "2.weight", "2.bias"}


def test_a_traced_model_trains_its_parameters():
    m = mlp()
    traced = loom.jit.trace(m, loom.randn(3, 8))
    assert traced.parameters()[0] is m[0].weight or traced.parameters()[0].data_ptr() == m[0].weight.data_ptr()
    x, y = loom.randn(3, 8), loom.tensor([0, 1, 2])
    F.nll_loss(traced(x).log(), y).backward()
    traced_grad = m[0].weight.grad.clone()
    m.zero_grad()
    F.nll_loss(m(x).log(), y).backward()
    assert (traced_grad - m[0].weight.grad).abs().max().item() < 1e-6
    opt = loom.optim.SGD(traced.parameters(), lr=0.1)
    opt.step()


def test_the_text_form_reads_back():
    traced = loom.jit.trace(mlp(), loom.randn(2, 8), input_names=["x"])
    g = loom.jit.parse_graph(traced.code)
    assert str(g) == traced.code
    assert g.input_names == ["x"]


def test_functions_with_several_outputs_and_constants():
    w = loom.tensor([1.0, 2.0, 3.0])

    def f(x, y):
        return x * w + y, (x - y).sum()

    traced = loom.jit.trace(f, (loom.ones(3), loom.zeros(3)))
    a, b = traced(loom.full((3,), 2.0), loom.ones(3))
    assert a.tolist() == [3.0, 5.0, 7.0]
    assert b.item() == 3.0
    assert "const %c0" in traced.code


def test_what_tracing_cannot_hold_is_refused_clearly():
    x = loom.ones(2, 3)
    xt = x.t()
    with pytest.raises(RuntimeError, match="shares the memory of %input0.*a view made before the trace began"):
        loom.jit.trace(lambda a: a * xt.t(), x)
    with pytest.raises(TypeError, match="must return a Tensor"):
        loom.jit.trace(lambda x: 3, loom.ones(2))
    traced = loom.jit.trace(lambda x: x * 2, loom.ones(2, 3))
    with pytest.raises(RuntimeError, match=r"input 0 \(%input0\) is float32\[4, 3\].*traced with float32\[2, 3\]"):
        traced(loom.ones(4, 3))
    # Randomness the graph replays differently is caught by check_trace.
    with pytest.raises(RuntimeError, match="differs from the model's"):
        loom.jit.trace(lambda x: F.dropout(x, 0.5, training=True), loom.ones(1000))
    loom.jit.trace(lambda x: F.dropout(x, 0.5, training=True), loom.ones(1000), check_trace=False)


def test_a_cnn_with_views_and_flatten_traces():
    loom.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(4 * 4 * 4, 10))
    traced = loom.jit.trace(m, loom.randn(2, 1, 8, 8))
    assert "view" in traced.graph.ops or "reshape" in traced.graph.ops
    x = loom.randn(2, 1, 8, 8)
    assert (traced(x) - m(x)).abs().max().item() < 1e-5
    # Tensor methods that make views, indexing and splits.

    def f(x):
        a, b = x.chunk(2, dim=1)
        return (a.transpose(0, 1)[1:, ::2] * b.t()[1:, ::2]).reshape(-1).unsqueeze(0)

    traced = loom.jit.trace(f, loom.randn(4, 6))
    x = loom.randn(4, 6)
    assert (traced(x) - f(x)).abs().max().item() == 0
    assert str(loom.jit.parse_graph(traced.code)) == traced.code


def test_parse_errors_name_the_place():
    with pytest.raises(RuntimeError, match="line 2, column .*unknown op 'reluu'.*did you mean 'relu'"):
        loom.jit.parse_graph("graph(%x : float32[2] @cpu:0):\n  %1 : float32[2] @cpu:0 = loom::reluu(%x)\n"
                             "  return (%1)")


def test_save_and_load_round_trip(tmp_path):
    m = mlp()
    traced = loom.jit.trace(m, loom.randn(2, 8))
    path = tmp_path / "mlp.loom"
    loom.jit.save(traced, path)
    back = loom.jit.load(path)
    x = loom.randn(2, 8)
    assert (back(x) - m(x)).abs().max().item() < 1e-6
    assert back.code == traced.code
    on_sim = loom.jit.load(path, map_location="sim")
    assert on_sim(x.to("sim")).device.type == "sim"
    # Not a model file: a plain safetensors checkpoint.
    loom.save(m.state_dict(), tmp_path / "sd.safetensors")
    with pytest.raises(RuntimeError, match="not a loom.jit model file"):
        loom.jit.load(tmp_path / "sd.safetensors")


def test_reading_a_value_into_python_warns_naming_the_line():
    def f(x):
        if x.sum().item() > 0:  # the branch taken is fixed in the graph
            return x * 2
        return x

    with pytest.warns(loom.jit.TracerWarning, match=r"Tensor.item\(\) reads a tensor's value") as record:
        traced = loom.jit.trace(f, loom.ones(3))
    assert record[0].filename == __file__ and record[0].lineno == f.__code__.co_firstlineno + 1
    assert traced(-loom.ones(3)).tolist() == [-2.0, -2.0, -2.0]  # follows the traced branch
    # Outside a trace, nothing warns and the methods are the originals again.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bool(loom.ones(1)) and loom.ones(2).tolist() == [1.0, 1.0]


def test_optimize_removes_identities_and_folds_constants():
    w = loom.arange(4.0)

    def f(x):
        return (x * 1 + 0).t().t() * (w * 2 + 1) + loom.relu(x) * 0 + loom.relu(x) * 0

    traced = loom.jit.trace(f, loom.ones(4))
    before = len(traced.graph.ops)
    assert traced.graph.optimize() > 0
    assert len(traced.graph.ops) < before and "t" not in traced.graph.ops
    x = loom.randn(4)
    assert (traced(x) - f(x)).abs().max().item() == 0


def test_dynamic_batch_runs_any_batch_size():
    loom.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.fc = nn.Linear(4 * 8 * 8, 10)

        def forward(self, x):
            h = loom.relu(self.conv(x.view(-1, 1, 8, 8)))
            return self.fc(h.view(h.size(0), -1))

    m = Net()
    traced = loom.jit.trace(m, loom.randn(3, 64), dynamic_batch=True)
    assert "float32[?, 64]" in traced.code and "size=[-1, 256]" in traced.code
    for batch in (1, 7):
        x = loom.randn(batch, 64)
        assert (traced(x) - m(x)).abs().max().item() < 1e-5
    with pytest.raises(RuntimeError, match=r"input 0 \(%input0\) is float32\[2, 63\].*traced with float32\[\?, 64\]"):
        traced(loom.randn(2, 63))
    back = loom.jit.parse_graph(traced.code)
    assert str(back) == traced.code


def new_gelu(x):
    # nanoGPT's GELU, as its model.py writes it: eight elementwise ops.
    return 0.5 * x * (1.0 + loom.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * loom.pow(x, 3.0))))


def test_elementwise_chains_fuse_into_one_node_with_eager_bits(tmp_path):
    x = loom.randn(64, 300)
    traced = loom.jit.trace(new_gelu, (x,))
    assert traced.graph.ops.count("mul") >= 4
    traced.graph.optimize()
    assert traced.graph.ops == ["_fused"]
    assert bool((traced(x) == new_gelu(x)).all())
    path = tmp_path / "gelu.loom"
    loom.jit.save(traced, path)
    assert bool((loom.jit.load(path)(x) == new_gelu(x)).all())


def test_numbers_keep_their_promotion_in_a_graph():
    # int64 * 2.5 is float32 (a Python number promotes by category only),
    # before and after fusion, and after the text form's round trip.
    def f(x):
        return (x * 3 + 1) * 2.5
    x = loom.arange(6)
    traced = loom.jit.trace(f, (x,))
    assert "wrapped" in str(traced.graph)
    assert traced(x).dtype == loom.float32
    traced.graph.fuse_elementwise()
    assert traced(x).dtype == loom.float32
    assert bool((traced(x) == f(x)).all())
    assert str(loom.jit.parse_graph(str(traced.graph))) == str(traced.graph)
