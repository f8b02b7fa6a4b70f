"""loom.nn layers and losses against PyTorch 1.13 as oracle: same weights (copied through numpy), same
inputs; forward outputs and the gradients of inputs and parameters must agree."""
import numpy as np
import pytest

import loom
import loom.nn as nn
import loom.nn.functional as F

torch = pytest.importorskip("torch", reason="PyTorch is the oracle for these tests")

RTOL, ATOL = 1e-4, 1e-5


def to_torch(t, requires_grad=False):
    out = torch.tensor(np.asarray(t.detach().numpy()))
    return out.requires_grad_(requires_grad)


def to_loom(a, requires_grad=False):
    return loom.tensor(a.detach().numpy().tolist(), dtype=_LOOM_DTYPES[str(a.dtype)], requires_grad=requires_grad)


_LOOM_DTYPES = {"torch.float32": loom.float32, "torch.float64": loom.float64, "torch.int64": loom.int64,
                "torch.bool": loom.bool}


def close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(), rtol=rtol, atol=atol)


def copy_weights(lm, tm):
    """Copies lm's state (parameters and buffers) into torch module tm, checking the names match."""
    lsd, tsd = lm.state_dict(), tm.state_dict()
    assert list(lsd.keys()) == list(tsd.keys())
    tm.load_state_dict({k: to_torch(v) for k, v in lsd.items()})


def check_layer(lm, tm, *shapes, rtol=RTOL, atol=ATOL, inputs=None, backward=True):
    """Forward (and backward of a weighted sum) of lm and tm on the same random inputs."""
    copy_weights(lm, tm)
    rng = np.random.default_rng(0)
    if inputs is None:
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [backward and a.dtype == np.float32 for a in inputs]
    if isinstance(tm, torch.nn.modules.loss._Loss):
        grads[1:] = [False] * (len(grads) - 1)  # no gradient for targets
    lx = [loom.tensor(a.tolist(), requires_grad=g) for a, g in zip(inputs, grads)]
    tx = [torch.tensor(a, requires_grad=g) for a, g in zip(inputs, grads)]
    ly, ty = lm(*lx), tm(*tx)
    if isinstance(ty, tuple):
        ly, ty = ly[0], ty[0]
    close(ly, ty, rtol, atol)
    if backward:
        w = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
        (ly * loom.tensor(w.tolist())).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        for a, b in zip(lx, tx):
            if b.grad is not None:
                close(a.grad, b.grad, rtol, atol)
        lparams, tparams = dict(lm.named_parameters()), dict(tm.named_parameters())
        for name, tp in tparams.items():
            if tp.grad is not None:
                close(lparams[name].grad, tp.grad, rtol, atol)
    return ly, ty


# ---------------------------------------------------------------- layers

def test_linear_and_bilinear():
    check_layer(nn.Linear(5, 3), torch.nn.Linear(5, 3), (4, 5))
    check_layer(nn.Linear(5, 3, bias=False), torch.nn.Linear(5, 3, bias=False), (2, 4, 5))
    check_layer(nn.Bilinear(3, 4, 2), torch.nn.Bilinear(3, 4, 2), (5, 3), (5, 4))


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(dilation=2, groups=2, bias=False),
                                    dict(padding="same"), dict(padding=1, padding_mode="reflect")])
def test_conv1d(kwargs):
    check_layer(nn.Conv1d(4, 6, 3, **kwargs), torch.nn.Conv1d(4, 6, 3, **kwargs), (2, 4, 9))


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1), dict(kernel_size=(2, 3), groups=2),
                                    dict(padding="same", dilation=2), dict(kernel_size=4, padding="same"),
                                    dict(padding=2, padding_mode="replicate")])
def test_conv2d(kwargs):
    kwargs = dict(kwargs)
    k = kwargs.pop("kernel_size", 3)
    check_layer(nn.Conv2d(4, 6, k, **kwargs), torch.nn.Conv2d(4, 6, k, **kwargs), (2, 4, 7, 8))


@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1, output_padding=1),
                                    dict(groups=2, dilation=2, bias=False)])
def test_conv_transpose2d(kwargs):
    check_layer(nn.ConvTranspose2d(4, 6, 3, **kwargs), torch.nn.ConvTranspose2d(4, 6, 3, **kwargs), (2, 4, 5, 6))


def test_conv_transpose2d_output_size():
    lm, tm = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    copy_weights(lm, tm)
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 4)).astype(np.float32)
    ly = lm(loom.tensor(x.tolist()), output_size=[8, 8])
    ty = tm(torch.tensor(x), output_size=[8, 8])
    assert ly.shape == (1, 3, 8, 8)
    close(ly, ty)
    with pytest.raises(ValueError, match="valid sizes"):
        lm(loom.tensor(x.tolist()), output_size=[12, 12])


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 5))])
def test_batchnorm_training_eval_and_running_stats(cls, shape):
    lm, tm = getattr(nn, cls)(3, momentum=0.2), getattr(torch.nn, cls)(3, momentum=0.2)
    for _ in range(2):  # two steps: running stats blend twice
        check_layer(lm, tm, shape)
        close(lm.running_mean, tm.running_mean)
        close(lm.running_var, tm.running_var)
    assert lm.num_batches_tracked.item() == 2
    lm.eval(), tm.eval()
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape).astype(np.float32)
    close(lm(loom.tensor(x.tolist())), tm(torch.tensor(x)))


def test_batchnorm_cumulative_average_and_no_tracking():
    lm, tm = nn.BatchNorm1d(3, momentum=None), torch.nn.BatchNorm1d(3, momentum=None)
    for _ in range(3):
        check_layer(lm, tm, (6, 3), backward=False)
    close(lm.running_mean, tm.running_mean)
    close(lm.running_var, tm.running_var)
    lm, tm = nn.BatchNorm2d(3, affine=False, track_running_stats=False), \
        torch.nn.BatchNorm2d(3, affine=False, track_running_stats=False)
    lm.eval(), tm.eval()  # no running stats: batch statistics even in eval
    check_layer(lm, tm, (2, 3, 4, 4))
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(loom.zeros(2, 3, 4))


def test_layer_norm_and_group_norm():
    check_layer(nn.LayerNorm(6), torch.nn.LayerNorm(6), (3, 4, 6))
    check_layer(nn.LayerNorm([4, 6], elementwise_affine=False), torch.nn.LayerNorm([4, 6], elementwise_affine=False),
                (3, 4, 6))
    lm, tm = nn.LayerNorm(6), torch.nn.LayerNorm(6)
    with torch.no_grad():
        tm.weight.uniform_(0.5, 1.5)
        tm.bias.uniform_(-1, 1)
    lm.load_state_dict({k: to_loom(v) for k, v in tm.state_dict().items()})
    check_layer(lm, tm, (2, 6))
    check_layer(nn.GroupNorm(2, 6), torch.nn.GroupNorm(2, 6), (3, 6, 4, 4))
    check_layer(nn.GroupNorm(3, 6, affine=False), torch.nn.GroupNorm(3, 6, affine=False), (3, 6, 5))


class _TorchRMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm (PyTorch 2.4) written out, for PyTorch 1.13 as the oracle."""

    def __init__(self, shape, eps=None, affine=True):
        super().__init__()
        self.shape, self.eps = (shape,) if isinstance(shape, int) else tuple(shape), eps
        self.weight = torch.nn.Parameter(torch.ones(self.shape)) if affine else None

    def forward(self, x):
        dims = tuple(range(-len(self.shape), 0))
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
        return y * self.weight if self.weight is not None else y


def test_rms_norm_matches_the_written_out_formula():
    lm, tm = nn.RMSNorm(6), _TorchRMSNorm(6)
    with torch.no_grad():
        tm.weight.uniform_(0.5, 1.5)
    lm.load_state_dict({k: to_loom(v) for k, v in tm.state_dict().items()})
    check_layer(lm, tm, (3, 4, 6))
    check_layer(nn.RMSNorm([4, 6], eps=0.1, elementwise_affine=False), _TorchRMSNorm([4, 6], 0.1, False), (3, 4, 6))
    # Rows long enough for the kernels' vector loops, split over threads.
    lm, tm = nn.RMSNorm(768), _TorchRMSNorm(768)
    check_layer(lm, tm, (64, 768))
    assert "eps=None" in repr(nn.RMSNorm(4))
    # eps None is the dtype's machine epsilon: a zero row stays 0, not NaN.
    z = F.rms_norm(loom.zeros(2, 4, dtype=loom.float64), 4)
    assert z.tolist() == [[0.0] * 4] * 2


def test_layer_norm_gradients_over_many_rows():
    # Enough rows for the gradient kernel's per-thread blocks.
    lm, tm = nn.LayerNorm(768), torch.nn.LayerNorm(768)
    with torch.no_grad():
        tm.weight.uniform_(0.5, 1.5)
        tm.bias.uniform_(-1, 1)
    lm.load_state_dict({k: to_loom(v) for k, v in tm.state_dict().items()})
    check_layer(lm, tm, (256, 768), rtol=1e-4, atol=1e-4)


def test_embedding_with_padding_idx():
    lm, tm = nn.Embedding(10, 4, padding_idx=-1), torch.nn.Embedding(10, 4, padding_idx=-1)
    assert lm.padding_idx == 9
    assert lm.weight.select(0, 9).tolist() == [0.0] * 4
    idx = np.array([[1, 9, 3], [9, 2, 1]])
    ly, ty = check_layer(lm, tm, inputs=[idx])
    assert lm.weight.grad.select(0, 9).tolist() == [0.0] * 4
    close(lm.weight.grad, tm.weight.grad)
    frozen = nn.Embedding.from_pretrained(loom.ones(3, 2))
    assert not frozen.weight.requires_grad and frozen(loom.tensor([2])).tolist() == [[1.0, 1.0]]


@pytest.mark.parametrize("name,args", [("ReLU", ()), ("GELU", ()), ("GELU", ("tanh",)), ("SiLU", ()),
                                       ("Sigmoid", ()), ("Tanh", ()), ("Softmax", (1,)), ("LogSoftmax", (-1,)),
                                       ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("Softplus", (2.0, 3.0)),
                                       ("ReLU6", ()), ("Hardtanh", ()), ("Hardtanh", (-0.5, 2.0)), ("Identity", ()), ("Flatten", ()), ("Flatten", (0, 1))])
def test_activations_and_shape_layers(name, args):
    check_layer(getattr(nn, name)(*args), getattr(torch.nn, name)(*args), (3, 4, 5))


def test_hardtanh_gradient_is_zero_at_bounds_rounded_to_the_dtype():
    # The bounds are rounded to the input's dtype first (PyTorch's min.to<scalar_t>()):
    # float32(0.1) sits at the bound 0.1, and so does bfloat16(0.1) = 0.10009765625,
    # which PyTorch 1.13 cannot differentiate on the CPU (no bfloat16 kernel).
    for lib in (loom, torch):
        x = lib.tensor([0.1, 0.5, 0.9, -0.3]).requires_grad_()
        F_ = lib.nn.functional
        F_.hardtanh(x, 0.1, 0.9).sum().backward()
        assert x.grad.tolist() == [0.0, 1.0, 0.0, 0.0]
    xb = loom.tensor([0.1, 0.5, 0.9], dtype=loom.bfloat16).requires_grad_()
    loom.nn.functional.hardtanh(xb, 0.1, 0.9).sum().backward()
    assert xb.grad.float().tolist() == [0.0, 1.0, 0.0]


def test_unflatten():
    check_layer(nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3)), (4, 6, 2))


@pytest.mark.parametrize("name,args,kwargs", [
    ("MaxPool2d", (2,), {}), ("MaxPool2d", (3,), dict(stride=2, padding=1)), ("MaxPool2d", (2,), dict(ceil_mode=True)),
    ("AvgPool2d", (2,), {}), ("AvgPool2d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("AdaptiveAvgPool2d", ((3, 2),), {}), ("AdaptiveAvgPool2d", (1,), {}), ("AdaptiveAvgPool2d", ((None, 2),), {})])
def test_pooling(name, args, kwargs):
    check_layer(getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs), (2, 3, 7, 6))


def test_max_pool_return_indices():
    x = np.random.default_rng(2).standard_normal((1, 2, 4, 4)).astype(np.float32)
    lv, li = nn.MaxPool2d(2, return_indices=True)(loom.tensor(x.tolist()))
    tv, ti = torch.nn.MaxPool2d(2, return_indices=True)(torch.tensor(x))
    close(lv, tv)
    assert li.tolist() == ti.tolist()


def test_dropout_train_and_eval():
    lm = nn.Dropout(0.5)
    x = loom.ones(1000)
    y = lm(x).tolist()
    assert set(y) <= {0.0, 2.0} and 350 < y.count(0.0) < 650
    lm.eval()
    assert lm(x).tolist() == x.tolist()
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention(batch_first):
    lm = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    lm.eval(), tm.eval()
    shape = (2, 5, 8) if batch_first else (5, 2, 8)
    kshape = (2, 3, 8) if batch_first else (3, 2, 8)
    copy_weights(lm, tm)
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(kshape).astype(np.float32)
    kpm = np.array([[False, False, True], [False, False, False]])
    mask = np.array([[0.0, -1.0, 0.5]] * 5, dtype=np.float32)
    lq, lk = loom.tensor(q.tolist(), requires_grad=True), loom.tensor(k.tolist(), requires_grad=True)
    tq, tk = torch.tensor(q, requires_grad=True), torch.tensor(k, requires_grad=True)
    lo, lw = lm(lq, lk, lk, key_padding_mask=loom.tensor(kpm.tolist()), attn_mask=loom.tensor(mask.tolist()))
    to, tw = tm(tq, tk, tk, key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(mask))
    close(lo, to)
    close(lw, tw)
    lo.sum().backward()
    to.sum().backward()
    close(lq.grad, tq.grad)
    close(lk.grad, tk.grad)
    close(lm.in_proj_weight.grad, tm.in_proj_weight.grad)
    # need_weights=False takes the scaled_dot_product_attention path; per-head weights.
    lo2, none = lm(lq, lk, lk, need_weights=False)
    assert none is None
    close(lo2, tm(tq, tk, tk, need_weights=False)[0])
    _, lw3 = lm(lq, lk, lk, average_attn_weights=False)
    _, tw3 = tm(tq, tk, tk, average_attn_weights=False)
    close(lw3, tw3)


def test_multihead_attention_unbatched_kdim_and_bool_mask():
    lm, tm = nn.MultiheadAttention(6, 3, kdim=4, vdim=5), torch.nn.MultiheadAttention(6, 3, kdim=4, vdim=5)
    copy_weights(lm, tm)
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in [(3, 6), (4, 4), (4, 5)])
    mask = np.triu(np.ones((3, 4), dtype=bool), 1)
    lo, lw = lm(*(loom.tensor(a.tolist()) for a in (q, k, v)), attn_mask=loom.tensor(mask.tolist()))
    to, tw = tm(*(torch.tensor(a) for a in (q, k, v)), attn_mask=torch.tensor(mask))
    close(lo, to)
    close(lw, tw)


def _torch_sdpa(q, k, v, mask=None, is_causal=False, scale=None):
    """PyTorch 1.13 has no F.scaled_dot_product_attention: its math, as PyTorch 2 defines it."""
    scale = 1 / q.shape[-1] ** 0.5 if scale is None else scale
    s = q @ k.transpose(-2, -1) * scale
    if is_causal:
        s = s.masked_fill(~torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return torch.softmax(s, -1) @ v


@pytest.mark.parametrize("case", ["plain", "causal", "bool", "float", "broadcast"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_dot_product_attention(case, dtype):
    # Without dropout loom runs the fused op (one kernel where a device has one) and its backward op.
    rng = np.random.default_rng(5)
    qs, ks, vs = (2, 3, 7, 8), (2, 3, 9, 8), (2, 3, 9, 5)
    if case == "broadcast":
        qs, ks = (2, 1, 7, 8), (9, 8)
    arrays = [rng.standard_normal(s).astype(dtype) for s in (qs, ks, vs)]
    mask = None
    if case == "bool":
        mask = rng.random((7, 9)) > 0.3
        mask[:, 0] = True
    elif case == "float":
        mask = rng.standard_normal((3, 7, 9)).astype(dtype)
    lt = [loom.tensor(a.tolist(), dtype=getattr(loom, dtype), requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    lmask = None if mask is None else loom.tensor(mask.tolist(), dtype=loom.bool if mask.dtype == bool else
                                                  getattr(loom, dtype))
    tmask = None if mask is None else torch.tensor(mask)
    causal = case == "causal"
    lo = F.scaled_dot_product_attention(*lt, lmask, is_causal=causal, scale=0.4)
    to = _torch_sdpa(*tt, tmask, causal, 0.4)
    close(lo, to)
    w = rng.standard_normal(to.shape).astype(dtype)
    (lo * loom.tensor(w.tolist(), dtype=getattr(loom, dtype))).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    for a, b in zip(lt, tt):
        close(a.grad, b.grad)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(norm_first):
    kw = dict(dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm_first)
    lm, tm = nn.TransformerEncoderLayer(8, 2, **kw), torch.nn.TransformerEncoderLayer(8, 2, **kw)
    check_layer(lm, tm, (2, 5, 8))
    lm, tm = nn.TransformerEncoderLayer(8, 2, activation="gelu", **kw), \
        torch.nn.TransformerEncoderLayer(8, 2, activation="gelu", **kw)
    check_layer(lm, tm, (2, 5, 8))


def test_transformer_encoder_stacks_copies():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8))
    tenc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0), 2,
                                       norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    check_layer(enc, tenc, (5, 2, 8))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_decoder_layer(norm_first):
    kw = dict(dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm_first)
    lm, tm = nn.TransformerDecoderLayer(8, 2, **kw), torch.nn.TransformerDecoderLayer(8, 2, **kw)
    check_layer(lm, tm, (2, 5, 8), (2, 7, 8))


def _run_with_masks(model, lib, src, tgt):
    """model(src, tgt) with a causal target mask and one padded source position (either library)."""
    mask = model.generate_square_subsequent_mask(tgt.shape[0])
    pad = lib.zeros(src.shape[1], src.shape[0], dtype=lib.bool)
    pad[0, -1] = True
    return model(src, tgt, tgt_mask=mask, src_key_padding_mask=pad)


def test_transformer_encoder_decoder_matches_pytorch():
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0)
    lm, tm = nn.Transformer(**kw), torch.nn.Transformer(**kw)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    copy_weights(lm, tm)
    rng = np.random.default_rng(3)
    src, tgt = rng.standard_normal((6, 2, 8)).astype(np.float32), rng.standard_normal((5, 2, 8)).astype(np.float32)
    lo = _run_with_masks(lm, loom, loom.tensor(src), loom.tensor(tgt))
    to = _run_with_masks(tm, torch, torch.tensor(src), torch.tensor(tgt))
    close(lo, to)
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.tolist() == torch.nn.Transformer.generate_square_subsequent_mask(3).tolist()
    with pytest.raises(RuntimeError, match="batch number"):
        lm(loom.zeros(6, 2, 8), loom.zeros(5, 3, 8))


# ---------------------------------------------------------------- losses

def _logits_targets(rng, n=6, c=4):
    return rng.standard_normal((n, c)).astype(np.float32), rng.integers(0, c, n)


@pytest.mark.parametrize("kwargs", [dict(), dict(reduction="sum"), dict(reduction="none"),
                                    dict(ignore_index=1), dict(label_smoothing=0.1), dict(weight=True),
                                    dict(weight=True, ignore_index=2, label_smoothing=0.2)])
def test_cross_entropy_and_nll(kwargs):
    rng = np.random.default_rng(6)
    x, t = _logits_targets(rng)
    kwargs = dict(kwargs)
    lkw, tkw = dict(kwargs), dict(kwargs)
    if kwargs.get("weight"):
        w = rng.uniform(0.5, 2.0, 4).astype(np.float32)
        lkw["weight"], tkw["weight"] = loom.tensor(w.tolist()), torch.tensor(w)
    check_layer(nn.CrossEntropyLoss(**lkw), torch.nn.CrossEntropyLoss(**tkw), inputs=[x, t])
    lkw.pop("label_smoothing", None), tkw.pop("label_smoothing", None)
    logp = torch.log_softmax(torch.tensor(x), 1).numpy()
    check_layer(nn.NLLLoss(**lkw), torch.nn.NLLLoss(**tkw), inputs=[logp, t])


def test_cross_entropy_probability_targets_and_spatial():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    p = torch.softmax(torch.tensor(rng.standard_normal((3, 5)).astype(np.float32)), 1).numpy()
    check_layer(nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss(), inputs=[x, p])
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    t = rng.integers(0, 3, (2, 4, 4))
    check_layer(nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss(), inputs=[x, t])


def _softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["indices", "indices, 1-d", "probabilities"])
def test_cross_entropy_gradients_and_double_backward(reduction, dtype, kind):
    """cross_entropy's gradients (input; target and weight for probabilities, which PyTorch differentiates) and
    the gradients of the input gradient (create_graph), spatial, with weight, ignore_index and label smoothing."""
    rng = np.random.default_rng(10)
    shape = (4,) if kind == "indices, 1-d" else (3, 4, 2, 2)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.uniform(0.5, 2.0, 4).astype(dtype)
    # From numpy arrays: loom.tensor(list, dtype=loom.float64) goes through float32.
    lx, tx = loom.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    leaves_l, leaves_t = [lx], [tx]
    if kind == "probabilities":
        q = _softmax(rng.standard_normal(shape), 1).astype(dtype)
        lt, tt = loom.tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
        lw, tw = loom.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
        leaves_l += [lt, lw]
        leaves_t += [tt, tw]
        kw = dict(label_smoothing=0.1)
    else:
        t = np.array(2) if kind == "indices, 1-d" else rng.integers(0, 4, (3, 2, 2))
        if t.ndim:
            t[0, 0, 0] = 2  # ignored below
        lt, tt = loom.tensor(t.tolist(), dtype=loom.int64), torch.tensor(t)
        lw, tw = loom.tensor(w), torch.tensor(w)
        kw = dict(ignore_index=2 if t.ndim else -100, label_smoothing=0.15)
    ly = F.cross_entropy(lx, lt, weight=lw, reduction=reduction, **kw)
    ty = torch.nn.functional.cross_entropy(tx, tt, weight=tw, reduction=reduction, **kw)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    close(ly, ty, **tol)
    g = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    lg = loom.autograd.grad([ly], leaves_l, [loom.tensor(g)], create_graph=True)
    tg = torch.autograd.grad([ty], leaves_t, [torch.tensor(g)], create_graph=True)
    for a, b in zip(lg, tg):
        close(a, b, **tol)
    # Second order: the gradient of <d loss / d x, v> with respect to every leaf.
    v = rng.standard_normal(shape).astype(dtype)
    (lg[0] * loom.tensor(v)).sum().backward()
    (tg[0] * torch.tensor(v)).sum().backward()
    for a, b in zip(leaves_l, leaves_t):
        close(a.grad, b.grad, **tol)


def test_cross_entropy_refuses_a_weight_gradient_with_class_indices():
    w = loom.tensor([1.0, 2.0, 0.5], requires_grad=True)
    loss = F.cross_entropy(loom.tensor([[0.1, 0.2, 0.3]], requires_grad=True), loom.tensor([1]), weight=w)
    with pytest.raises(Exception, match="derivative for 'weight' is not implemented"):
        loss.backward()


@pytest.mark.parametrize("name,kwargs", [("MSELoss", {}), ("MSELoss", dict(reduction="sum")), ("L1Loss", {}),
                                         ("L1Loss", dict(reduction="none")), ("SmoothL1Loss", {}),
                                         ("SmoothL1Loss", dict(beta=0.5)), ("SmoothL1Loss", dict(beta=0.0)),
                                         ("HuberLoss", dict(delta=0.7))])
def test_regression_losses(name, kwargs):
    check_layer(getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs), (4, 5), (4, 5))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    rng = np.random.default_rng(8)
    p = rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
    t = (rng.uniform(size=(4, 3)) > 0.5).astype(np.float32)
    check_layer(nn.BCELoss(reduction=reduction), torch.nn.BCELoss(reduction=reduction), inputs=[p, t])
    w = rng.uniform(0.5, 2, 3).astype(np.float32)
    check_layer(nn.BCELoss(weight=loom.tensor(w.tolist()), reduction=reduction),
                torch.nn.BCELoss(weight=torch.tensor(w), reduction=reduction), inputs=[p, t])
    x = (rng.standard_normal((4, 3)) * 30).astype(np.float32)  # large logits: the stable form matters
    check_layer(nn.BCEWithLogitsLoss(reduction=reduction), torch.nn.BCEWithLogitsLoss(reduction=reduction),
                inputs=[x, t])
    check_layer(nn.BCEWithLogitsLoss(pos_weight=loom.tensor(w.tolist()), reduction=reduction),
                torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w), reduction=reduction), inputs=[x, t])


def test_bce_clamps_log_like_pytorch():
    p = loom.tensor([0.0, 1.0, 0.5])
    t = loom.tensor([1.0, 0.0, 1.0])
    tl = torch.nn.functional.binary_cross_entropy(torch.tensor([0.0, 1.0, 0.5]), torch.tensor([1.0, 0.0, 1.0]))
    assert abs(F.binary_cross_entropy(p, t).item() - tl.item()) < 1e-4


# ---------------------------------------------------------------- functional extras

def test_functional_helpers_match_torch():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    lx, tx = loom.tensor(x.tolist()), torch.tensor(x)
    close(F.normalize(lx), torch.nn.functional.normalize(tx))
    close(F.normalize(lx, p=1, dim=0), torch.nn.functional.normalize(tx, p=1, dim=0))
    close(F.logsigmoid(lx), torch.nn.functional.logsigmoid(tx))
    close(F.softmin(lx, 1), torch.nn.functional.softmin(tx, 1))
    close(F.pad(lx, (1, 2)), torch.nn.functional.pad(tx, (1, 2)))
    close(F.pad(lx, (1, 1, 2, 0), value=3.0), torch.nn.functional.pad(tx, (1, 1, 2, 0), value=3.0))
    idx = [[0, 2], [3, 1]]
    assert F.one_hot(loom.tensor(idx)).tolist() == torch.nn.functional.one_hot(torch.tensor(idx)).tolist()
    assert F.one_hot(loom.tensor(idx), 6).shape == (2, 2, 6)
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(loom.tensor(idx), 3)


def test_small_cnn_training_step_matches_torch():
    """A whole model: forward, loss, backward, one manual SGD step, second forward."""
    def build(mod):
        return mod.Sequential(mod.Conv2d(1, 4, 3, padding=1), mod.BatchNorm2d(4), mod.ReLU(), mod.MaxPool2d(2),
                              mod.Flatten(), mod.Linear(4 * 4 * 4, 10))
    lm, tm = build(nn), build(torch.nn)
    copy_weights(lm, tm)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((5, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 5)
    for _ in range(2):
        ll = F.cross_entropy(lm(loom.tensor(x.tolist())), loom.tensor(y.tolist()))
        tl = torch.nn.functional.cross_entropy(tm(torch.tensor(x)), torch.tensor(y))
        assert abs(ll.item() - tl.item()) < 1e-4
        lm.zero_grad(), tm.zero_grad()
        ll.backward(), tl.backward()
        with loom.no_grad():
            for p in lm.parameters():
                p.sub_(p.grad * 0.1)
        with torch.no_grad():
            for p in tm.parameters():
                p.sub_(p.grad * 0.1)
    for (k, a), b in zip(lm.state_dict().items(), tm.state_dict().values()):
        close(a, b, rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------- interpolate

@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 4, 5), dict(scale_factor=2)),
    ((1, 2, 7, 9), dict(size=(3, 4))),
    ((1, 2, 5, 5), dict(scale_factor=(1.7, 0.6))),
    ((1, 2, 5, 5), dict(scale_factor=(1.7, 0.6), recompute_scale_factor=True)),
    ((2, 3, 6), dict(size=11)),
    ((1, 2, 3, 4, 2), dict(size=(5, 4, 3))),
    ((1, 2, 5, 7), dict(size=(8, 3), mode="nearest-exact")),
    ((2, 3, 4, 5), dict(size=(7, 9), mode="bilinear")),
    ((1, 2, 9, 8), dict(scale_factor=0.45, mode="bilinear")),
    ((1, 2, 4, 5), dict(size=(7, 9), mode="bilinear", align_corners=True)),
    ((1, 2, 5, 5), dict(scale_factor=(1.7, 0.6), mode="bilinear")),
    ((2, 3, 6), dict(scale_factor=2.2, mode="linear")),
    ((1, 2, 3, 4, 2), dict(size=(5, 4, 3), mode="trilinear", align_corners=True)),
    ((1, 2, 8, 6), dict(size=(3, 4), mode="area")),
])
def test_interpolate_matches_torch(shape, kwargs):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ref_in = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.interpolate(ref_in, **kwargs)
    ours_in = loom.tensor(x, requires_grad=True)
    ours = loom.nn.functional.interpolate(ours_in, **kwargs)
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.random.default_rng(1).standard_normal(ref.shape).astype(np.float32)
    ref.backward(torch.tensor(g))
    ours.backward(loom.tensor(g))
    np.testing.assert_allclose(ours_in.grad.numpy(), ref_in.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_upsample_modules_and_interpolate_errors():
    x = np.arange(2 * 3 * 3, dtype=np.float32).reshape(1, 2, 3, 3)
    for ours, ref in [(loom.nn.Upsample(scale_factor=2, mode="bilinear"), torch.nn.Upsample(scale_factor=2, mode="bilinear")),
                      (loom.nn.UpsamplingNearest2d(size=5), torch.nn.UpsamplingNearest2d(size=5)),
                      (loom.nn.UpsamplingBilinear2d(scale_factor=2), torch.nn.UpsamplingBilinear2d(scale_factor=2))]:
        np.testing.assert_allclose(ours(loom.tensor(x)).numpy(), ref(torch.tensor(x)).numpy(), rtol=1e-6)
        assert repr(ours) == repr(ref)
    F = loom.nn.functional
    t = loom.tensor(x)
    with pytest.raises(RuntimeError, match="only one of size or scale_factor"):
        F.interpolate(t, size=4, scale_factor=2)
    with pytest.raises(RuntimeError, match="either size or scale_factor"):
        F.interpolate(t)
    with pytest.raises(RuntimeError, match="align_corners option can only be set"):
        F.interpolate(t, size=4, align_corners=True)
    with pytest.raises(RuntimeError, match="bilinear mode needs 4D input"):
        F.interpolate(loom.zeros(1, 2, 3), size=4, mode="bilinear")
    with pytest.raises(RuntimeError, match="bicubic"):
        F.interpolate(t, size=4, mode="bicubic")
