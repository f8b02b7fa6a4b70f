"""The pieces of PyTorch's API real programs reached for: tensor conveniences, backends and
accelerator queries, importable distributed / onnx / nn.parallel, nn.utils, channel dropout, and the
Adadelta and LBFGS optimizers (against PyTorch where it is installed)."""
import math

import numpy as np
import pytest

import loom
import loom.nn as nn
import loom.nn.functional as F

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle")


def test_format_of_one_element_tensors():
    loss = loom.tensor(0.123456)
    assert f"{loss:.4f}" == "0.1235" and "{:>8.2f}".format(loom.tensor(3.14159)) == "    3.14"
    assert f"{loom.tensor(7):d}" == "7"
    t = loom.ones(2)
    assert f"{t}" == str(t)
    with pytest.raises(TypeError, match="format"):
        f"{t:.2f}"


def test_type_names_and_converts():
    t = loom.ones(2)
    assert t.type() == "loom.FloatTensor" and loom.ones(1, dtype=loom.int64).type() == "loom.LongTensor"
    assert t.type(loom.float64).dtype is loom.float64
    assert t.type("torch.LongTensor").dtype is loom.int64
    with pytest.raises(ValueError, match="invalid type"):
        t.type("torch.NopeTensor")


def test_new_factories_follow_the_tensor():
    t = loom.ones(2, dtype=loom.float64)
    assert t.new_zeros(3, 2).dtype is loom.float64 and tuple(t.new_zeros((3, 2)).shape) == (3, 2)
    assert t.new_ones(2).tolist() == [1.0, 1.0]
    assert t.new_full((2,), 5).tolist() == [5.0, 5.0]
    assert tuple(t.new_empty(4).shape) == (4,)
    assert t.new_tensor([1, 2]).dtype is loom.float64
    assert t.new_zeros(2, dtype=loom.int32).dtype is loom.int32
    assert t.new_ones(2, requires_grad=True).requires_grad


def test_addcmul_and_addcdiv():
    a, b, c = loom.ones(3), loom.tensor([1.0, 2.0, 3.0]), loom.tensor([2.0, 4.0, 6.0])
    assert a.addcmul(b, c, value=0.5).tolist() == [2.0, 5.0, 10.0]
    assert loom.addcdiv(a, c, b, value=2).tolist() == [5.0, 5.0, 5.0]
    x = loom.zeros(3)
    x.addcmul_(b, b).addcdiv_(c, b)
    assert x.tolist() == [3.0, 6.0, 11.0]


def test_threads_round_trip():
    n = loom.get_num_threads()
    loom.set_num_threads(1)
    assert loom.get_num_threads() == 1
    loom.set_num_threads(n)
    with pytest.raises(RuntimeError, match="positive"):
        loom.set_num_threads(0)


def test_backends_and_accelerator_tell_the_truth():
    gpu = loom.cuda.is_available()
    assert loom.backends.mps.is_available() is False and loom.backends.mps.is_built() is False
    assert loom.backends.cudnn.is_available() == gpu
    assert (loom.backends.cudnn.version() is None) == (not gpu)
    loom.backends.cudnn.benchmark = True
    with loom.backends.cudnn.flags(enabled=False):
        assert loom.backends.cudnn.enabled is False
    assert loom.backends.cudnn.enabled is True
    acc = loom.accelerator.current_accelerator()
    assert (acc is not None) == loom.accelerator.is_available()
    if gpu:
        assert acc.type == "cuda" and loom.accelerator.device_count() == loom.cuda.device_count()
    loom.accelerator.synchronize()
    assert loom.accelerator.current_device_index() == 0


def test_distributed_onnx_and_parallel_import():
    import loom.distributed as dist
    import loom.onnx
    assert dist.is_available() is True and dist.is_initialized() is False
    # Without RANK / WORLD_SIZE, env:// names what is missing (processes: test_distributed.py).
    with pytest.raises(Exception, match="RANK"):
        dist.init_process_group("gloo")
    with pytest.raises(Exception, match="no plugin manifest lists communication backend 'nosuch'"):
        dist.init_process_group("nosuch", init_method="tcp://127.0.0.1:1", world_size=1, rank=0)
    assert loom.onnx.is_in_onnx_export() is False  # export itself: test_onnx.py
    model = nn.DataParallel(nn.Linear(3, 2)) if not loom.cuda.device_count() > 1 else None
    if model is not None:
        assert tuple(model(loom.ones(4, 3)).shape) == (4, 2)
        assert "module.weight" in model.state_dict()
    with pytest.raises(RuntimeError, match="DistributedDataParallel"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))


@needs_torch
@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_clip_grad_norm_matches_pytorch(norm_type):
    grads = [np.random.RandomState(i).randn(*s).astype(np.float32) for i, s in enumerate([(3, 4), (5,), (2, 2)])]
    lp = [loom.zeros(g.shape, requires_grad=True) for g in grads]
    tp = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, q, g in zip(lp, tp, grads):
        p.grad, q.grad = loom.tensor(g), torch.tensor(g)
    total = nn.utils.clip_grad_norm_(lp, 1.5, norm_type)
    want = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type)
    np.testing.assert_allclose(total.item(), want.item(), rtol=1e-5)
    for p, q in zip(lp, tp):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_clip_grad_value_and_vectors():
    p = loom.zeros(4, requires_grad=True)
    p.grad = loom.tensor([-3.0, 0.5, 2.0, -0.1])
    nn.utils.clip_grad_value_([p], 1.0)
    np.testing.assert_allclose(p.grad.tolist(), [-1.0, 0.5, 1.0, -0.1], rtol=1e-6)
    with pytest.raises(RuntimeError, match="non-finite"):
        p.grad = loom.tensor([math.inf, 0.0, 0.0, 0.0])
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert tuple(v.shape) == (8,)
    nn.utils.vector_to_parameters(loom.arange(8, dtype=loom.float32), m.parameters())
    assert m.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and m.bias.tolist() == [6.0, 7.0]
    with pytest.raises(RuntimeError, match="8 elements"):
        nn.utils.vector_to_parameters(loom.zeros(5), m.parameters())


@pytest.mark.parametrize("cls,shape,lead", [(nn.Dropout1d, (4, 6, 5), 2), (nn.Dropout2d, (4, 6, 3, 3), 2),
                                            (nn.Dropout3d, (2, 6, 2, 2, 2), 2), (nn.Dropout2d, (6, 3, 3), 1)])
def test_channel_dropout_drops_whole_channels(cls, shape, lead):
    loom.manual_seed(0)
    layer = cls(0.5)
    out = layer(loom.ones(*shape))
    channels = out.reshape(int(np.prod(shape[:lead])), -1).tolist()
    for channel in channels:  # each channel all dropped or all kept (and scaled by 2)
        assert len(set(channel)) == 1 and channel[0] in (0.0, 2.0)
    assert {c[0] for c in channels} == {0.0, 2.0}
    layer.eval()
    assert layer(loom.ones(*shape)).tolist() == loom.ones(*shape).tolist()
    with pytest.raises(RuntimeError, match="Expected"):
        cls(0.5)(loom.ones(2))


def _fit(opt_name, make_opt, steps, closure_needed=False):
    """The same small regression in loom and PyTorch, same start; the loss after each step."""
    rng = np.random.RandomState(0)
    X, w0 = rng.randn(32, 5).astype(np.float32), rng.randn(5, 1).astype(np.float32) * 0.1
    Y = (X @ rng.randn(5, 1) + 0.3).astype(np.float32)
    out = {}
    for m in (loom, torch):
        w = m.tensor(w0).requires_grad_()
        b = m.zeros(1, requires_grad=True)
        x, y = m.tensor(X), m.tensor(Y)
        opt = make_opt(m, [w, b])
        losses = []
        for _ in range(steps):
            def closure():
                opt.zero_grad()
                loss = ((x @ w + b - y) ** 2).mean()
                loss.backward()
                return loss
            if closure_needed:
                losses.append(float(opt.step(closure)))
            else:
                losses.append(float(closure()))
                opt.step()
        out[m.__name__] = losses
    return out


@needs_torch
def test_adadelta_matches_pytorch():
    r = _fit("Adadelta", lambda m, p: m.optim.Adadelta(p, lr=1.0, rho=0.9, weight_decay=0.01), 30)
    np.testing.assert_allclose(r["loom"], r["torch"], rtol=1e-5)


@needs_torch
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_matches_pytorch(line_search):
    r = _fit("LBFGS", lambda m, p: m.optim.LBFGS(p, lr=0.5 if line_search is None else 1, max_iter=10,
                                                 history_size=5, line_search_fn=line_search), 6, True)
    np.testing.assert_allclose(r["loom"], r["torch"], rtol=1e-3, atol=1e-6)
    assert r["loom"][-1] < 0.1 * r["loom"][0]


def test_lbfgs_needs_a_closure_and_one_group():
    p = loom.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="closure"):
        loom.optim.LBFGS([p]).step()
    with pytest.raises(ValueError, match="line_search_fn"):
        loom.optim.LBFGS([p], line_search_fn="armijo")


def test_legacy_tensor_constructor_as_pytorch():
    t = loom.Tensor([[1, 2], [3, 4]])
    assert t.dtype == loom.float32 and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tuple(loom.Tensor(2, 3).shape) == (2, 3) and loom.Tensor(2, 3).dtype == loom.float32
    assert tuple(loom.Tensor((4,)).shape) == (4,)
    assert tuple(loom.Tensor().shape) == (0,)
    assert loom.Tensor(np.array([1.5, 2.5])).tolist() == [1.5, 2.5]
    base = loom.ones(3)
    alias = loom.Tensor(base)
    alias.add_(1)
    assert base.tolist() == [2.0, 2.0, 2.0]  # shares the data, as torch.Tensor(tensor)
    with pytest.raises(TypeError, match="ints"):
        loom.Tensor(2, "x")
    with pytest.raises(TypeError, match="keyword"):
        loom.Tensor([1], dtype=loom.int64)


def test_version_is_the_projects():
    assert isinstance(loom.__version__, str) and loom.__version__.count(".") == 2


def test_size_and_typed_tensor_names():
    s = loom.Size([2, 3])
    assert s == loom.ones(2, 3).shape and s.numel() == 6 and repr(s) == "loom.Size([2, 3])"
    assert isinstance(s[1:], loom.Size) and s[0] == 2
    with pytest.raises(TypeError, match="ints"):
        loom.Size([2.5])
    t = loom.LongTensor([1, 2])
    assert t.dtype == loom.int64 and t.tolist() == [1, 2]
    assert isinstance(t, loom.LongTensor) and not isinstance(t, loom.FloatTensor)
    assert isinstance(loom.ones(2), loom.FloatTensor) and isinstance(loom.ones(2), loom.Tensor)
    assert tuple(loom.FloatTensor(2, 3).shape) == (2, 3) and loom.ByteTensor(4).dtype == loom.uint8
    assert loom.DoubleTensor(loom.ones(2)).dtype == loom.float64
    assert not isinstance(loom.ones(2), loom.cuda.FloatTensor)
    with pytest.raises(TypeError, match="sizes"):
        loom.FloatTensor([1], [2])


def test_isclose_allclose_and_equal_as_torch():
    a = loom.tensor([1.0, float("inf"), float("nan"), 2.0])
    b = loom.tensor([1.0 + 1e-9, float("inf"), float("nan"), 2.1])
    assert a.isclose(b).tolist() == [True, True, False, False]
    assert loom.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False]
    assert loom.allclose(a[:2], b[:2]) and not loom.allclose(a, b)
    assert loom.allclose(a, b, atol=0.2, equal_nan=True)
    assert loom.equal(loom.arange(3), loom.arange(3)) and not loom.equal(loom.arange(3), loom.arange(4))
    assert loom.ones(2, dtype=loom.bool).allclose(loom.ones(2, dtype=loom.bool))
