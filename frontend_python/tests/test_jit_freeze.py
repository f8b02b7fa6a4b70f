"""loom.jit.freeze: a traced model for inference, as torch.jit.freeze — its
parameters become constants and batch norms fold into the convs and linears
before them."""
import pytest

import loom
import loom.nn as nn


class BasicBlock(nn.Module):
    """ResNet's basic block: conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU."""

    def __init__(self, c):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
        self.conv2, self.bn2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)

    def forward(self, x):
        h = loom.relu(self.bn1(self.conv1(x)))
        return loom.relu(self.bn2(self.conv2(h)) + x)


def trained_block(c=8):
    """A block whose batch norms hold statistics of their own (a few
    training steps), so a fold that ignored them would show."""
    loom.manual_seed(0)
    m = BasicBlock(c)
    opt = loom.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        m(loom.randn(4, c, 6, 6) * 2 + 1).sum().backward()
        opt.step()
    return m.eval()


def test_freeze_folds_the_batch_norms_and_keeps_the_results():
    m = trained_block()
    x = loom.randn(2, 8, 6, 6)
    traced = loom.jit.trace(m, x)
    assert traced.graph.ops.count("batch_norm") == 2
    frozen = loom.jit.freeze(traced)
    assert "batch_norm" not in frozen.graph.ops
    assert frozen.graph.ops.count("conv2d") == 2
    assert frozen.named_parameters() == []
    with loom.no_grad():
        want = m(x)
    assert loom.allclose(frozen(x), want, rtol=1e-4, atol=1e-5)
    # The traced module is not changed by freezing a copy of it.
    assert traced.graph.ops.count("batch_norm") == 2
    assert loom.allclose(traced(x), want, rtol=1e-6, atol=1e-6)


def test_a_frozen_copy_does_not_follow_the_original_s_later_training():
    m = trained_block()
    x = loom.randn(2, 8, 6, 6)
    traced = loom.jit.trace(m, x)
    frozen = loom.jit.freeze(traced, optimize=False)
    before = frozen(x)
    with loom.no_grad():
        for p in traced.parameters():
            p.add_(1)
    assert loom.equal(frozen(x), before)


def test_freeze_folds_linear_and_batch_norm_1d():
    loom.manual_seed(1)
    m = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.ReLU())
    m.train()
    for _ in range(2):
        m(loom.randn(8, 6) * 3)
    m.eval()
    x = loom.randn(3, 6)
    frozen = loom.jit.freeze(loom.jit.trace(m, x))
    assert frozen.graph.ops == ["linear", "relu"]
    with loom.no_grad():
        assert loom.allclose(frozen(x), m(x), rtol=1e-4, atol=1e-5)


def test_freeze_refuses_a_model_traced_in_training_mode():
    m = trained_block().train()
    traced = loom.jit.trace(m, loom.randn(2, 8, 6, 6), check_trace=False)
    with pytest.raises(Exception, match="training mode.*eval"):
        loom.jit.freeze(traced)


def test_freeze_refuses_what_is_not_a_traced_module():
    with pytest.raises(TypeError, match="loom.jit.trace"):
        loom.jit.freeze(nn.Linear(2, 2))


def test_a_frozen_model_saves_and_loads(tmp_path):
    m = trained_block()
    x = loom.randn(2, 8, 6, 6)
    frozen = loom.jit.freeze(loom.jit.trace(m, x))
    path = tmp_path / "frozen.loom"
    loom.jit.save(frozen, path)
    loaded = loom.jit.load(path)
    assert loom.equal(loaded(x), frozen(x))


def test_a_traced_module_takes_the_nn_module_calls_pytorch_code_makes():
    m = trained_block()
    x = loom.randn(2, 8, 6, 6)
    traced = loom.jit.trace(m, x)
    assert traced.eval() is traced and traced.training is False
    state = traced.state_dict()
    assert "conv1.weight" in state and "bn1.running_mean" in state
    on_sim = traced.to("sim")
    assert on_sim is traced
    assert traced.parameters()[0].device.type == "sim"
    y = traced(x.to("sim"))
    assert y.device.type == "sim"
    with loom.no_grad():
        assert loom.allclose(y.cpu(), m(x), rtol=1e-5, atol=1e-5)
    assert loom.allclose(traced.cpu()(x), y.cpu())
