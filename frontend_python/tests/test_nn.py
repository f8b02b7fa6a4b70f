"""loom.nn mechanics without an oracle: Parameter, Module registration, traversal, state_dict, modes,
conversions, hooks, containers, repr, and the statistics of nn.init."""
import collections
import copy
import math

import numpy as np
import pytest

import loom
import loom.nn as nn
import loom.nn.functional as F
from loom.nn import init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.scale = nn.Parameter(loom.ones(1))
        self.register_buffer("step", loom.zeros(1))
        self.register_buffer("cache", loom.zeros(2), persistent=False)

    def forward(self, x):
        return self.bn(self.fc(x)) * self.scale


# ---------------------------------------------------------------- Parameter

def test_parameter_is_a_tensor_sharing_data():
    data = loom.zeros(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, loom.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.shape == (2, 3)
    assert p.data_ptr() == data.data_ptr()
    assert not nn.Parameter(loom.zeros(1), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert type(p * 2) is loom.Tensor
    assert nn.Parameter().shape == (0,)
    with pytest.raises(TypeError, match="must be a Tensor"):
        nn.Parameter([1.0, 2.0])


def test_parameter_deepcopy_is_independent():
    p = nn.Parameter(loom.ones(2))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.requires_grad
    with loom.no_grad():
        q.fill_(3)
    assert p.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- registration, traversal

def test_registration_by_attribute():
    net = Net()
    assert list(net._parameters) == ["scale"]
    assert list(net._buffers) == ["step", "cache"]
    assert list(net._modules) == ["fc", "bn"]
    assert [n for n, _ in net.named_parameters()] == ["scale", "fc.weight", "fc.bias", "bn.weight", "bn.bias"]
    assert [n for n, _ in net.named_buffers()] == ["step", "cache", "bn.running_mean", "bn.running_var",
                                                   "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_modules()] == ["", "fc", "bn"]
    assert list(net.children()) == [net.fc, net.bn]
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("fc") is net.fc and net.get_parameter("fc.bias") is net.fc.bias
    assert net.get_buffer("bn.running_mean") is net.bn.running_mean
    assert "fc" in dir(net) and "scale" in dir(net)


def test_reassignment_moves_between_registries():
    net = Net()
    net.scale = None  # a registered parameter may become None
    assert "scale" in net._parameters and net.scale is None
    with pytest.raises(TypeError, match="nn.Parameter or None expected"):
        net.scale = loom.ones(1)
    net.fc = nn.Identity()
    assert isinstance(net._modules["fc"], nn.Identity)
    with pytest.raises(TypeError, match="child module"):
        net.fc = 3
    net.step = loom.ones(1)  # a buffer takes a plain tensor
    assert net._buffers["step"].tolist() == [1.0]
    with pytest.raises(TypeError, match="buffer"):
        net.step = 1.0
    del net.fc
    assert "fc" not in net._modules
    with pytest.raises(AttributeError, match="has no attribute 'fc'"):
        net.fc  # noqa: B018


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="name can.*contain"):
        m.register_parameter("a.b", nn.Parameter(loom.ones(1)))
    with pytest.raises(TypeError, match="nn.Parameter or None required"):
        m.register_parameter("w", loom.ones(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("w", _nonleaf_param(loom.ones(2)))

    class NoInit(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(loom.ones(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):
        NoInit()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def _nonleaf_param(x):
    # Parameter() detaches, so a Parameter with history needs faking.
    class Fake(nn.Parameter):
        @property
        def grad_fn(self):
            return object()
    return Fake(x)


def test_shared_parameters_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.modules())) == 3
    assert len(seq.state_dict()) == 4  # state_dict keeps both names, as PyTorch does


# ---------------------------------------------------------------- state_dict

def test_state_dict_round_trip():
    a, b = Net(), Net()
    with loom.no_grad():
        a.step.fill_(7)
    sd = a.state_dict()
    assert list(sd) == ["scale", "step", "fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var", "bn.num_batches_tracked"]
    assert "cache" not in sd  # non-persistent
    assert not sd["fc.weight"].requires_grad and not isinstance(sd["fc.weight"], nn.Parameter)
    assert isinstance(a.state_dict(keep_vars=True)["fc.weight"], nn.Parameter)
    result = b.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for k, v in b.state_dict().items():
        assert v.tolist() == sd[k].tolist(), k
    fc_weight = b.fc.weight
    b.load_state_dict(a.state_dict())
    assert b.fc.weight is fc_weight  # loads copy into the existing parameters


def test_load_state_dict_strict_errors():
    net = Net()
    sd = net.state_dict()
    del sd["fc.bias"]
    sd["extra"] = loom.ones(1)
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    msg = str(e.value)
    assert "Error(s) in loading state_dict for Net" in msg
    assert 'Missing key(s) in state_dict: "fc.bias"' in msg
    assert 'Unexpected key(s) in state_dict: "extra"' in msg
    result = net.load_state_dict(sd, strict=False)  # reported, not raised (PyTorch's behaviour)
    assert result.missing_keys == ["fc.bias"] and result.unexpected_keys == ["extra"]

    sd = net.state_dict()
    sd["fc.weight"] = loom.ones(5, 3)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc.weight: copying a param with shape \(5, 3\)"):
        net.load_state_dict(sd, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        net.load_state_dict([1, 2])


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(2)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    bn.load_state_dict(sd)
    assert bn.num_batches_tracked.item() == 0


# ---------------------------------------------------------------- modes, grads, hooks

def test_train_eval_and_requires_grad():
    net = Net()
    assert net.training and net.bn.training
    assert net.eval() is net
    assert not net.training and not net.bn.training
    net.train()
    assert net.bn.training
    with pytest.raises(ValueError, match="boolean"):
        net.train("no")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad():
    net = Net()
    net(loom.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and set(p.grad.flatten().tolist()) == {0.0} for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_apply_visits_children_first():
    seen = []
    net = Net().apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Net"]

    def init_weights(m):
        if isinstance(m, nn.Linear):
            init.zeros_(m.weight)
    net.apply(init_weights)
    assert set(net.fc.weight.flatten().tolist()) == {0.0}


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    y = lin(loom.ones(3, 2))
    assert calls == [(3, 2)]
    np.testing.assert_allclose(y.tolist(), (lin.bias + 1).expand(3, 2).tolist(), rtol=1e-6)
    h1.remove(), h2.remove()
    lin(loom.ones(1, 2))
    assert len(calls) == 1


# ---------------------------------------------------------------- conversions

def test_to_dtype_keeps_names_and_grads_and_integer_buffers():
    net = Net()
    net(loom.randn(4, 3)).sum().backward()
    names = [n for n, _ in net.named_parameters()]
    assert net.to(loom.float64) is net
    assert [n for n, _ in net.named_parameters()] == names
    assert all(isinstance(p, nn.Parameter) and p.dtype is loom.float64 and p.requires_grad
               for p in net.parameters())
    assert all(p.grad.dtype is loom.float64 for p in net.parameters())
    assert net.bn.running_mean.dtype is loom.float64
    assert net.bn.num_batches_tracked.dtype is loom.int64  # integer buffers keep their dtype
    assert net.fc.weight is net._modules["fc"]._parameters["weight"]
    assert net(loom.randn(2, 3, dtype=loom.float64)).dtype is loom.float64
    net.float()
    assert net.fc.weight.dtype is loom.float32
    with pytest.raises(TypeError, match="floating point"):
        net.to(loom.int32)


def test_to_same_device_and_dtype_keeps_parameter_identity():
    net = Net()
    params = list(net.parameters())
    net.to("cpu")
    net.to(loom.float32)
    net.to(loom.zeros(1))
    assert all(a is b for a, b in zip(params, net.parameters()))


def test_to_other_device_when_available():
    try:
        loom.zeros(1).to("sim")
    except Exception:  # noqa: BLE001
        pytest.skip("no 'sim' device plugin in this build")
    net = Net().to("sim")
    assert all(p.device.type == "sim" for p in net.parameters())
    assert all(b.device.type == "sim" for b in net.buffers())
    y = net(loom.randn(4, 3).to("sim"))
    assert y.device.type == "sim"


# ---------------------------------------------------------------- containers

def test_sequential():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and isinstance(seq[1], nn.ReLU)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    assert seq(loom.ones(5, 2)).shape == (5, 1)
    seq.append(nn.Sigmoid())
    assert list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[1], nn.Linear)
    seq[2] = nn.Tanh()
    assert isinstance(seq[2], nn.Tanh)
    named = nn.Sequential(collections.OrderedDict([("enc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_children()] == ["enc", "act"] and named.enc is named[0]
    with pytest.raises(IndexError, match="out of range"):
        seq[5]  # noqa: B018


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    ml += [nn.Tanh()]
    assert isinstance(ml[-1], nn.Tanh) and len(ml) == 5
    ml.insert(0, nn.Identity())
    assert isinstance(ml[0], nn.Identity) and list(ml._modules) == [str(i) for i in range(6)]
    del ml[0]
    assert isinstance(ml[0], nn.Linear)
    with pytest.raises(TypeError, match="iterable"):
        ml.extend(nn.ReLU())
    md = nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ReLU()})
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    md["c"] = nn.Tanh()
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]
    assert isinstance(md.pop("c"), nn.Tanh) and "c" not in md


# ---------------------------------------------------------------- repr

def test_repr_matches_pytorch_layout():
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.GELU("tanh"),
                        nn.Sequential(nn.Flatten(), nn.Linear(8, 2)), nn.Dropout(0.1))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)\n"
        "  (1): BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
        "  (2): GELU(approximate='tanh')\n"
        "  (3): Sequential(\n"
        "    (0): Flatten(start_dim=1, end_dim=-1)\n"
        "    (1): Linear(in_features=8, out_features=2, bias=True)\n"
        "  )\n"
        "  (4): Dropout(p=0.1, inplace=False)\n"
        ")")
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.Embedding(5, 2, padding_idx=0)) == "Embedding(5, 2, padding_idx=0)"
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"


def test_repr_matches_torch_when_available():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for reprs")

    def build(m):
        return m.Sequential(m.Conv1d(2, 4, 3, stride=2, groups=2), m.ConvTranspose2d(4, 2, 3, output_padding=0),
                            m.MaxPool2d(2), m.AvgPool2d(3, stride=1), m.AdaptiveAvgPool2d((2, 2)),
                            m.GroupNorm(2, 4), m.LeakyReLU(0.2), m.Softmax(dim=1), m.Unflatten(1, (2, 2)),
                            m.MultiheadAttention(4, 2), m.CrossEntropyLoss(), m.Bilinear(2, 3, 4), m.Identity())
    assert repr(build(nn)) == repr(build(torch.nn))


# ---------------------------------------------------------------- layers: argument checks

def test_layer_argument_errors():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=2.0)
    with pytest.raises(ValueError, match="Padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="different to the input size"):
        F.binary_cross_entropy(loom.ones(2) * 0.5, loom.ones(3))
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")


def test_legacy_reduction_flags():
    x, y = loom.tensor([1.0, 2.0]), loom.tensor([0.0, 0.0])
    assert F.mse_loss(x, y, size_average=False).item() == 5.0
    assert F.mse_loss(x, y, reduce=False).tolist() == [1.0, 4.0]


def test_softmax_implicit_dim_follows_pytorch_rule():
    x = loom.randn(2, 3)
    np.testing.assert_allclose(nn.Softmax()(x).sum(1).tolist(), [1.0, 1.0], rtol=1e-5)
    x3 = loom.randn(2, 3, 4)
    np.testing.assert_allclose(F.softmax(x3).sum(0).flatten().tolist(), [1.0] * 12, rtol=1e-5)


# ---------------------------------------------------------------- init

def _stats(t):
    a = np.asarray(t.detach().numpy(), dtype=np.float64)
    return a.mean(), a.std(), a.min(), a.max()


def test_calculate_gain_and_fans():
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("conv2d") == 1
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    assert init._calculate_fan_in_and_fan_out(loom.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(loom.empty(5))
    with pytest.raises(ValueError, match="fan_in, fan_out"):
        init.kaiming_normal_(loom.empty(3, 3), mode="fan_avg")


def test_init_distributions():
    loom.manual_seed(0)
    w = loom.empty(256, 512)
    bound = math.sqrt(6.0 / (256 + 512))
    mean, std, lo, hi = _stats(init.xavier_uniform_(w))
    assert abs(mean) < 0.01 and -bound <= lo and hi <= bound and abs(std - bound / math.sqrt(3)) < 0.002
    mean, std, _, _ = _stats(init.xavier_normal_(w, gain=2.0))
    assert abs(std - 2.0 * math.sqrt(2.0 / 768)) < 0.002
    mean, std, _, _ = _stats(init.kaiming_normal_(w, nonlinearity="relu"))
    assert abs(std - math.sqrt(2.0 / 512)) < 0.002
    mean, std, _, _ = _stats(init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))
    assert abs(std - math.sqrt(2.0 / 256)) < 0.003
    bound = math.sqrt(3.0) * math.sqrt(2.0) / math.sqrt(512)
    _, _, lo, hi = _stats(init.kaiming_uniform_(w))
    assert -bound <= lo < -0.95 * bound and 0.95 * bound < hi <= bound
    mean, std, lo, hi = _stats(init.trunc_normal_(w, std=1.0, a=-1.0, b=1.5))
    assert -1.0 <= lo and hi <= 1.5
    assert _stats(init.constant_(w, 0.5))[0] == 0.5
    assert _stats(init.ones_(w))[0] == 1.0 and _stats(init.zeros_(w))[3] == 0.0
    assert init.eye_(loom.empty(2, 3)).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    p = nn.Parameter(loom.empty(3, 3))
    init.normal_(p)  # under no_grad: a leaf that requires grad can be filled
    assert p.is_leaf and p.grad_fn is None


def test_default_layer_init_bounds_match_pytorch():
    loom.manual_seed(1)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) reduces to this
    _, std, lo, hi = _stats(lin.weight)
    assert -bound <= lo and hi <= bound and abs(std - bound / math.sqrt(3)) < 0.001
    _, _, lo, hi = _stats(lin.bias)
    assert -bound <= lo and hi <= bound
    conv = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)
    _, _, lo, hi = _stats(conv.weight)
    assert -bound <= lo and hi <= bound and hi > 0.9 * bound
    convt = nn.ConvTranspose2d(16, 8, 3)  # fan_in from weight dim 1: 8 * 9
    _, _, lo, hi = _stats(convt.bias)
    assert -1 / math.sqrt(72) <= lo and hi <= 1 / math.sqrt(72)
    emb = nn.Embedding(1000, 64)
    mean, std, _, _ = _stats(emb.weight)
    assert abs(mean) < 0.02 and abs(std - 1.0) < 0.02
    mha = nn.MultiheadAttention(16, 4)
    assert set(mha.in_proj_bias.tolist()) == {0.0} and set(mha.out_proj.bias.tolist()) == {0.0}
    bn = nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1.0] * 3 and bn.running_var.tolist() == [1.0] * 3


def test_training_loop_reduces_loss():
    loom.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    x = loom.randn(64, 2)
    y = (x * loom.tensor([1.5, -2.0])).sum(1, keepdim=True)
    loss_fn = nn.MSELoss()
    first = None
    for _ in range(200):
        loss = loss_fn(model(x), y)
        first = first if first is not None else loss.item()
        model.zero_grad()
        loss.backward()
        with loom.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * 0.05)
    assert loss.item() < 0.1 * first
