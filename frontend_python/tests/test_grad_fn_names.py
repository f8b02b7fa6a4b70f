"""grad_fn names as PyTorch names them. Each case: an expression, and the name PyTorch 2.x gives its
result's node. With PyTorch installed, the table itself is checked against it (1.13 here names a few
nodes otherwise; those are listed). Run as a script to print a PyTorch's names for the whole table."""
import sys

import pytest

import loom


def _x(m):
    return m.tensor([[0.5, -1.0, 2.0, 0.3], [1.5, 0.2, -0.7, 1.0], [0.1, 0.9, -2.0, 0.4]], requires_grad=True)


def _y(m):
    return m.tensor([[0.2, 1.0, -1.0, 0.6], [0.5, 0.1, 0.7, -1.0], [0.3, -0.9, 2.0, 0.8]], requires_grad=True)


def F(m):
    return m.nn.functional


CASES = [
    ("add", lambda m, x, y: x + y, "AddBackward0"),
    ("sub", lambda m, x, y: x - y, "SubBackward0"),
    ("rsub", lambda m, x, y: 1 - x, "RsubBackward1"),
    ("mul", lambda m, x, y: x * y, "MulBackward0"),
    ("div", lambda m, x, y: x / y, "DivBackward0"),
    ("neg", lambda m, x, y: -x, "NegBackward0"),
    ("pow scalar", lambda m, x, y: x ** 2, "PowBackward0"),
    ("pow tensor", lambda m, x, y: x.abs() ** y, "PowBackward1"),
    ("pow scalar base", lambda m, x, y: 2 ** x, "PowBackward2"),
    ("sum", lambda m, x, y: x.sum(), "SumBackward0"),
    ("sum dim", lambda m, x, y: x.sum(0), "SumBackward1"),
    ("mean", lambda m, x, y: x.mean(), "MeanBackward0"),
    ("mean dim", lambda m, x, y: x.mean(1), "MeanBackward1"),
    ("prod", lambda m, x, y: x.prod(), "ProdBackward0"),
    ("prod dim", lambda m, x, y: x.prod(1), "ProdBackward1"),
    ("max dim", lambda m, x, y: x.max(0)[0], "MaxBackward0"),
    ("amax", lambda m, x, y: x.amax(0), "AmaxBackward0"),
    ("relu", lambda m, x, y: x.relu(), "ReluBackward0"),
    ("sigmoid", lambda m, x, y: x.sigmoid(), "SigmoidBackward0"),
    ("tanh", lambda m, x, y: x.tanh(), "TanhBackward0"),
    ("exp", lambda m, x, y: x.exp(), "ExpBackward0"),
    ("sqrt", lambda m, x, y: x.abs().sqrt(), "SqrtBackward0"),
    ("view", lambda m, x, y: x.view(-1), "ViewBackward0"),
    ("reshape", lambda m, x, y: x.reshape(-1), "ViewBackward0"),
    ("flatten", lambda m, x, y: x.flatten(), "ViewBackward0"),
    ("t", lambda m, x, y: x.t(), "TBackward0"),
    ("transpose", lambda m, x, y: x.transpose(0, 1), "TransposeBackward0"),
    ("permute", lambda m, x, y: x.permute(1, 0), "PermuteBackward0"),
    ("unsqueeze", lambda m, x, y: x.unsqueeze(0), "UnsqueezeBackward0"),
    ("expand", lambda m, x, y: x[:1].expand(3, 4), "ExpandBackward0"),
    ("slice", lambda m, x, y: x[1:], "SliceBackward0"),
    ("select", lambda m, x, y: x[0], "SelectBackward0"),
    ("split", lambda m, x, y: x.split(2)[0], "SplitBackward0"),
    ("chunk", lambda m, x, y: x.chunk(2)[0], "SplitBackward0"),
    ("unbind", lambda m, x, y: x.unbind(0)[0], "UnbindBackward0"),
    ("clone", lambda m, x, y: x.clone(), "CloneBackward0"),
    ("contiguous", lambda m, x, y: x.t().contiguous(), "CloneBackward0"),
    ("to dtype", lambda m, x, y: x.to(m.float64), "ToCopyBackward0"),
    ("cat", lambda m, x, y: m.cat([x, y]), "CatBackward0"),
    ("matmul 2-d", lambda m, x, y: x @ y.t(), "MmBackward0"),
    ("matmul 2-d 1-d", lambda m, x, y: x @ y[0], "MvBackward0"),
    ("matmul 1-d 1-d", lambda m, x, y: x[0] @ y[0], "DotBackward0"),
    ("mm", lambda m, x, y: x.mm(y.t()), "MmBackward0"),
    ("bmm", lambda m, x, y: m.bmm(x.unsqueeze(0), y.t().unsqueeze(0)), "BmmBackward0"),
    ("addmm", lambda m, x, y: m.addmm(y[:, :3], x, y.t()), "AddmmBackward0"),
    ("linear", lambda m, x, y: F(m).linear(x, y), "MmBackward0"),
    ("linear bias", lambda m, x, y: F(m).linear(x, y, y[0, :3]), "AddmmBackward0"),
    ("softmax", lambda m, x, y: x.softmax(1), "SoftmaxBackward0"),
    ("log_softmax", lambda m, x, y: x.log_softmax(1), "LogSoftmaxBackward0"),
    ("clamp", lambda m, x, y: x.clamp(-1, 1), "ClampBackward1"),
    ("where", lambda m, x, y: m.where(x > 0, x, y), "WhereBackward0"),
    ("masked_fill", lambda m, x, y: x.masked_fill(x > 0, 0.0), "MaskedFillBackward0"),
    ("cumsum", lambda m, x, y: x.cumsum(0), "CumsumBackward0"),
    ("gather", lambda m, x, y: x.gather(1, m.tensor([[0], [1], [2]])), "GatherBackward0"),
    ("mse_loss", lambda m, x, y: F(m).mse_loss(x, y), "MseLossBackward0"),
    ("l1_loss", lambda m, x, y: F(m).l1_loss(x, y), "MeanBackward0"),
    ("binary_cross_entropy", lambda m, x, y: F(m).binary_cross_entropy(x.sigmoid(), y.sigmoid()),
     "BinaryCrossEntropyBackward0"),
    ("binary_cross_entropy_with_logits", lambda m, x, y: F(m).binary_cross_entropy_with_logits(x, y.sigmoid()),
     "BinaryCrossEntropyWithLogitsBackward0"),
    ("smooth_l1_loss", lambda m, x, y: F(m).smooth_l1_loss(x, y), "SmoothL1LossBackward0"),
    ("huber_loss", lambda m, x, y: F(m).huber_loss(x, y), "HuberLossBackward0"),
    ("cross_entropy", lambda m, x, y: F(m).cross_entropy(x, m.tensor([0, 1, 2])), "NllLossBackward0"),
    ("gelu", lambda m, x, y: F(m).gelu(x), "GeluBackward0"),
    ("silu", lambda m, x, y: F(m).silu(x), "SiluBackward0"),
    ("layer_norm", lambda m, x, y: F(m).layer_norm(x, (4,)), "NativeLayerNormBackward0"),
    ("embedding", lambda m, x, y: F(m).embedding(m.tensor([0, 1]), x), "EmbeddingBackward0"),
    ("conv2d", lambda m, x, y: F(m).conv2d(x.view(1, 1, 3, 4), y.view(1, 1, 3, 4)[:, :, :2, :2]),
     "ConvolutionBackward0"),
    ("adaptive_avg_pool2d to 1", lambda m, x, y: F(m).adaptive_avg_pool2d(x.view(1, 1, 3, 4), 1), "MeanBackward1"),
    ("lerp scalar weight", lambda m, x, y: x.lerp(y, 0.5), "LerpBackward0"),
    ("lerp tensor weight", lambda m, x, y: x.lerp(y, y.sigmoid()), "LerpBackward1"),
]

# Where Debian's PyTorch 1.13 names a node otherwise than 2.x (the table's names).
TORCH_1_13_NAMES = {"reshape": "ReshapeAliasBackward0", "flatten": "ReshapeAliasBackward0",
                    "pow scalar base": "PowBackward1"}


def _name(m, fn):
    out = fn(m, _x(m), _y(m))
    return type(out.grad_fn).__name__ if m.__name__ == "torch" else out.grad_fn.name()


@pytest.mark.parametrize("label,fn,expected", CASES, ids=[c[0] for c in CASES])
def test_loom_names_nodes_as_pytorch(label, fn, expected):
    assert _name(loom, fn) == expected
    assert repr(fn(loom, _x(loom), _y(loom)).grad_fn).startswith(f"<{expected}")


@pytest.mark.parametrize("label,fn,expected", CASES, ids=[c[0] for c in CASES])
def test_the_table_is_pytorchs(label, fn, expected):
    torch = pytest.importorskip("torch")
    if torch.__version__.startswith("1."):
        expected = TORCH_1_13_NAMES.get(label, expected)
    assert _name(torch, fn) == expected


if __name__ == "__main__":  # python3 test_grad_fn_names.py: the names an installed PyTorch gives
    import torch
    wrong = [(label, expected, _name(torch, fn)) for label, fn, expected in CASES if _name(torch, fn) != expected]
    print(f"torch {torch.__version__}: {len(CASES) - len(wrong)} of {len(CASES)} names agree")
    for w in wrong:
        print("  %-30s table %-28s torch %s" % w)
    sys.exit(1 if wrong else 0)
