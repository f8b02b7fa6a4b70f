"""Mixed precision: autocast's per-op policy (in the core, so on every device type), gradients through
the casts, and GradScaler's scaling, inf / NaN skipping and scale updates."""
import threading
import warnings

import numpy as np
import pytest

import loom
import loom.nn as nn
import loom.nn.functional as F


@pytest.mark.parametrize("device,low", [("cpu", loom.bfloat16), ("sim", loom.float16)])
def test_policy_lower_precision_float32_promote(device, low):
    x = loom.randn(4, 8, device=device)
    w = loom.randn(8, 3, device=device)
    with loom.autocast(device, dtype=low):
        y = x @ w
        assert y.dtype is low  # lower precision
        assert F.linear(x, w.t()).dtype is low
        assert y.softmax(1).dtype is loom.float32  # float32 ops widen 16-bit inputs
        assert y.sum().dtype is loom.float32
        assert F.mse_loss(y, y.detach()).dtype is loom.float32
        assert loom.cat([y, x[:, :3]]).dtype is loom.float32  # promote: the widest input
        assert (y + 1).dtype is low  # ops without a policy run as they are
        d = loom.randn(2, 2, dtype=loom.float64, device=device)
        assert (d @ d).dtype is loom.float64  # float64 is never cast down
    assert (x @ w).dtype is loom.float32  # off again after the block


def test_conv_runs_in_lower_precision():
    with loom.autocast("cpu"):
        out = nn.Conv2d(3, 4, 3)(loom.randn(1, 3, 8, 8))
    assert out.dtype is loom.bfloat16


def test_gradients_reach_float32_parameters_and_backward_may_run_inside():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    x, y = loom.randn(5, 8), loom.randint(0, 2, (5,))
    with loom.autocast("cpu"):
        out = model(x)
        loss = F.cross_entropy(out, y)
        assert out.dtype is loom.bfloat16 and loss.dtype is loom.float32
        loss.backward()  # the engine suspends autocast: gradients keep the forward's dtypes
    for p in model.parameters():
        assert p.grad is not None and p.grad.dtype is loom.float32


def test_refuses_binary_cross_entropy_and_allows_the_logits_form():
    with loom.autocast("cpu"):
        with pytest.raises(RuntimeError, match="unsafe to autocast.*binary_cross_entropy_with_logits"):
            F.binary_cross_entropy(loom.rand(3), loom.rand(3))
        assert F.binary_cross_entropy_with_logits(loom.randn(3), loom.rand(3)).dtype is loom.float32


def test_nesting_disabling_decorator_and_threads():
    x = loom.randn(2, 2)
    with loom.autocast("cpu"):
        assert loom.is_autocast_enabled("cpu")
        with loom.autocast("cpu", enabled=False):
            assert (x @ x).dtype is loom.float32
        assert (x @ x).dtype is loom.bfloat16
        seen = []
        t = threading.Thread(target=lambda: seen.append((x @ x).dtype))  # the state is per thread
        t.start()
        t.join()
        assert seen == [loom.float32]
    assert not loom.is_autocast_enabled("cpu")

    @loom.autocast("cpu")
    def f(a):
        return a @ a
    assert f(x).dtype is loom.bfloat16 and (x @ x).dtype is loom.float32
    assert loom.get_autocast_dtype("cpu") is loom.bfloat16


def test_bad_arguments_are_named():
    with pytest.raises(RuntimeError, match="float16 or bfloat16"):
        loom.autocast("cpu", dtype=loom.int32)
    with pytest.raises(ValueError, match="device_type"):
        loom.autocast(loom.device("cpu"))
    with pytest.raises(RuntimeError, match="nope"):
        with loom.autocast("nope"):
            pass


def test_cuda_autocast_without_a_gpu_warns_and_does_nothing():
    if loom.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match="Disabling"):
        ctx = loom.cuda.amp.autocast()
    with ctx:
        assert (loom.ones(2, 2) @ loom.ones(2, 2)).dtype is loom.float32
    with pytest.warns(UserWarning, match="Disabling"):
        scaler = loom.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0


def _scaled_step(scaler, opt, model, x, poison=False):
    opt.zero_grad()
    loss = model(x).sum()
    if poison:
        loss = loss * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()


def test_grad_scaler_scales_skips_and_updates():
    model = nn.Linear(3, 1)
    opt = loom.optim.SGD(model.parameters(), lr=0.1)
    scaler = loom.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    x = loom.ones(2, 3)
    before = model.weight.tolist()
    scaled = scaler.scale(model(x).sum())
    assert scaled.item() == pytest.approx(8.0 * model(x).sum().item())
    scaled.backward()
    scaler.unscale_(opt)
    np.testing.assert_allclose(model.weight.grad.tolist(), [[2.0, 2.0, 2.0]])  # the true gradient
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(model.weight.tolist(), (np.array(before) - 0.2).tolist(), rtol=1e-6)
    assert scaler.get_scale() == 8.0
    _scaled_step(scaler, opt, model, x)
    assert scaler.get_scale() == 16.0  # two clean steps: grown
    kept = model.weight.tolist()
    _scaled_step(scaler, opt, model, x, poison=True)
    assert model.weight.tolist() == kept  # inf gradients: the step is skipped
    assert scaler.get_scale() == 8.0  # and the scale backs off
    state = scaler.state_dict()
    fresh = loom.amp.GradScaler("cpu")
    fresh.load_state_dict(state)
    assert fresh.get_scale() == 8.0 and fresh.state_dict() == state
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: 0)


def test_grad_scaler_disabled_is_a_pass_through():
    scaler = loom.amp.GradScaler("cpu", enabled=False)
    t = loom.ones(2)
    assert scaler.scale(t) is t and scaler.get_scale() == 1.0 and scaler.state_dict() == {}


def test_custom_fwd_and_bwd_carry_the_state():
    class Square(loom.autograd.Function):
        @staticmethod
        @loom.amp.custom_fwd(device_type="cpu", cast_inputs=loom.float32)
        def forward(ctx, a):
            ctx.save_for_backward(a)
            ctx.dtype = a.dtype
            ctx.enabled = loom.is_autocast_enabled("cpu")
            return a * a

        @staticmethod
        @loom.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    a = loom.randn(3, dtype=loom.bfloat16, requires_grad=True)
    with loom.autocast("cpu"):
        out = Square.apply(a)
    assert out.dtype is loom.float32  # forward ran on float32 inputs with autocast off
    out.sum().backward()
    assert a.grad is not None
