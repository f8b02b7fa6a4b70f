"""nn.functional: PyTorch's functional API over loom's op catalog.

Most functions are thin calls to a catalog op (``loom.<op>``) with PyTorch's
signature; a few helpers (one_hot, normalize, bilinear,
multi_head_attention_forward) are written with loom ops.

String arguments are always passed to catalog ops explicitly: the binding
does not apply string defaults from schemas yet.
"""
import math
import numbers
import warnings

import loom as _loom  # the catalog ops (loom.<op>); attributes are looked up at call time
from .. import _C

Tensor = _C.Tensor


# ---------------------------------------------------------------- helpers

def _pair(x, n=2, name="argument"):
    if isinstance(x, numbers.Integral):
        return [int(x)] * n
    x = [int(v) for v in x]
    if len(x) == 1:
        return x * n
    if len(x) != n:
        raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {x}")
    return x


def _check_tensor(x, fn, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def _reduction_from_legacy(size_average, reduce):
    """PyTorch's deprecated size_average/reduce flags as a reduction string."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


def _get_reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:
        reduction = _reduction_from_legacy(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


# ---------------------------------------------------------------- activations

def relu(input, inplace=False):
    return input.relu_() if inplace else _loom.relu(input)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(input, min_val, max_val) in input's dtype, with PyTorch's gradient: 0 at the bounds too (clamp's passes there)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else _loom.hardtanh(input, min_val, max_val)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return input.leaky_relu_(negative_slope) if inplace else _loom.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return input.elu_(alpha) if inplace else _loom.elu(input, alpha)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return _loom.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    return input.silu_() if inplace else _loom.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _loom.softplus(input, beta, threshold)


def logsigmoid(input):
    return -_loom.softplus(-input, 1, 20)


def sigmoid(input):
    return _loom.sigmoid(input)


def tanh(input):
    return _loom.tanh(input)


def _softmax_dim(ndim):
    # PyTorch's implicit-dim rule (it warns; we follow the rule quietly).
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _loom.softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    return _loom.log_softmax(input, dim, dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    return _C._normalize(input, float(p), int(dim), float(eps))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 * x2) / max(||x1|| ||x2||, eps) along dim; x1 and x2 broadcast."""
    return _C._cosine_similarity(x1, x2, int(dim), float(eps))


# ---------------------------------------------------------------- linear, conv

def linear(input, weight, bias=None):
    return _loom.linear(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k over the last dims of input1 (in1) and input2 (in2)."""
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise RuntimeError(f"bilinear: expected input1 (*, {in1}) and input2 (*, {in2}), got "
                           f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    # x1 @ W as (*, out, in2), then the dot with x2 along in2.
    t = input1.matmul(weight.permute(1, 0, 2).reshape(in1, out_f * in2))
    t = t.reshape(*input1.shape[:-1], out_f, in2)
    y = (t * input2.unsqueeze(-2)).sum(-1)
    return y + bias if bias is not None else y


def _same_padding(input, weight, stride, dilation, nd, fn):
    """Pads input so that the output keeps its size; PyTorch's 'same' (extra on the right when odd)."""
    if any(s != 1 for s in _pair(stride, nd)):
        raise ValueError(f"{fn}: padding='same' is not supported for strided convolutions")
    dilation = _pair(dilation, nd)
    sym, pad_list, asym = [], [], False
    for d in range(nd):
        total = dilation[d] * (weight.shape[2 + d] - 1)
        left = total // 2
        sym.append(left)
        pad_list = [left, total - left] + pad_list  # F.pad order: last dim first
        asym = asym or (total % 2 == 1)
    if asym:
        return pad(input, pad_list), [0] * nd
    return input, sym


def _conv(fn, nd, input, weight, bias, stride, padding, dilation, groups):
    _check_tensor(input, fn)
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            input, padding = _same_padding(input, weight, stride, dilation, nd, fn)
        else:
            raise ValueError(f"{fn}: invalid padding string {padding!r}, should be one of 'valid', 'same'")
    return getattr(_loom, fn)(input, weight, bias, _pair(stride, nd), _pair(padding, nd), _pair(dilation, nd),
                             groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _loom.conv_transpose2d(input, weight, bias, _pair(stride), _pair(padding), _pair(output_padding), groups,
                                 _pair(dilation))


# ---------------------------------------------------------------- pooling

def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    stride = _pair(kernel_size if stride is None or stride == [] else stride)
    args = (input, _pair(kernel_size), stride, _pair(padding), _pair(dilation), bool(ceil_mode))
    if return_indices:
        return tuple(_loom.max_pool2d_with_indices(*args))
    if input.requires_grad and _loom.is_grad_enabled():
        # Keep the argmax positions for backward instead of pooling again there (as PyTorch).
        return _loom.max_pool2d_with_indices(*args)[0]
    return _loom.max_pool2d(*args)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    stride = _pair(kernel_size if stride is None or stride == [] else stride)
    return _loom.avg_pool2d(input, _pair(kernel_size), stride, _pair(padding), bool(ceil_mode),
                           bool(count_include_pad), divisor_override)


def adaptive_avg_pool2d(input, output_size):
    """output_size: an int or (H, W); None in it keeps that input size."""
    if isinstance(output_size, numbers.Integral):
        output_size = (output_size, output_size)
    output_size = [input.shape[-2 + i] if s is None else int(s) for i, s in enumerate(output_size)]
    return _loom.adaptive_avg_pool2d(input, output_size)


# ---------------------------------------------------------------- dropout, embedding, pad

def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p and scales the rest by 1/(1-p) when training.

    ``inplace`` is accepted for compatibility; the result is always a new tensor.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    # The catalog op always drops; these early returns live in C++ loom::dropout, which
    # the generic dispatch does not call, so they are repeated here.
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input * 0.0  # as PyTorch: NaN and inf stay NaN
    return _loom.dropout(input, float(p), True)


def _feature_dropout(input, p, training, inplace, batched_dim, fn):
    """Zeroes whole channels with probability p (C++ loom::nn::functional::feature_dropout)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _C._feature_dropout(input, float(p), bool(training), bool(inplace), batched_dim, fn)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, L) or (C, L) inputs."""
    return _feature_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, H, W) or (C, H, W) inputs."""
    return _feature_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel dropout for (N, C, D, H, W) or (C, D, H, W) inputs."""
    return _feature_dropout(input, p, training, inplace, 5, "dropout3d")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Rows of ``weight`` at ``input``'s indices; the padding_idx row gets no gradient."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not supported")
    if padding_idx is not None:
        n = weight.size(0)
        if not -n <= padding_idx < n:
            raise ValueError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += n
    return _loom.embedding(weight, input, padding_idx)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dims of an (N, C, ...) input (the rules live in C++ loom::interpolate)."""
    _check_tensor(input, "interpolate")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if size is not None:
        size = [int(size)] if isinstance(size, numbers.Integral) else [int(s) for s in size]
    if scale_factor is not None:
        scale_factor = ([float(scale_factor)] if isinstance(scale_factor, numbers.Real)
                        else [float(s) for s in scale_factor])
    return _C._interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate, as PyTorch's."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad)//2 dims: pad = (left_last, right_last, left_prev, right_prev, ...)."""
    if len(pad) % 2 != 0:
        raise ValueError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise ValueError("Padding length should be less than or equal to two times the input dimension")
    if mode not in ("constant", "reflect", "replicate"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported (constant, reflect, replicate are)")
    if mode == "constant" and value is not None:
        value = float(value)
    return _loom.pad(input, [int(v) for v in pad], mode, value)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a trailing dim of size num_classes (max+1 when -1)."""
    _check_tensor(tensor, "one_hot", "tensor")
    return _C._one_hot(tensor, int(num_classes))


# ---------------------------------------------------------------- normalisation

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = [normalized_shape]
    return _loom.layer_norm(input, list(normalized_shape), weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x**2) + eps) * weight over the trailing ``normalized_shape`` dims; eps
    defaults to the input dtype's machine epsilon (``torch.nn.functional.rms_norm``)."""
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = [normalized_shape]
    return _loom.rms_norm(input, list(normalized_shape), weight, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _loom.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Normalises over all dims but 1; in training, updates the running stats in place."""
    return _loom.batch_norm(input, running_mean, running_var, weight, bias, bool(training), momentum, eps)


# ---------------------------------------------------------------- losses

def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Class indices or class probabilities as target; weight, ignore_index, label_smoothing as in PyTorch."""
    reduction = _get_reduction(reduction, size_average, reduce)
    return _loom.cross_entropy(input, target, weight, reduction, ignore_index, float(label_smoothing))


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction = _get_reduction(reduction, size_average, reduce)
    return _loom.nll_loss(input, target, weight, reduction, ignore_index)


def _check_same_size(input, target, fn):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{fn}: Using a target size ({tuple(target.shape)}) that is different to the input size "
                         f"({tuple(input.shape)}). Please ensure they have the same size.")


def _warn_size(input, target, fn):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{fn}: Using a target size ({tuple(target.shape)}) that is different to the input size "
                      f"({tuple(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _get_reduction(reduction, size_average, reduce)
    _warn_size(input, target, "mse_loss")
    return _loom.mse_loss(input, target, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _get_reduction(reduction, size_average, reduce)
    _warn_size(input, target, "l1_loss")
    return _loom.l1_loss(input, target, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (L1 when beta == 0)."""
    reduction = _get_reduction(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _warn_size(input, target, "smooth_l1_loss")
    return _loom.smooth_l1_loss(input, target, reduction, float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    reduction = _get_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_size(input, target, "huber_loss")
    return _loom.huber_loss(input, target, reduction, float(delta))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log x + (1-t) log(1-x)), logs clamped at -100 and the gradient's denominator at 1e-12, as PyTorch."""
    reduction = _get_reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "binary_cross_entropy")
    return _loom.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed stably: (1-t) x + (1 + (pw-1) t) softplus(-x)."""
    reduction = _get_reduction(reduction, size_average, reduce)
    _check_same_size(input, target, "binary_cross_entropy_with_logits")
    return _loom.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def _where(cond, a, b):
    return _loom.where(cond, a, b)


# ---------------------------------------------------------------- attention

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    return _loom.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale)


def _float_mask(mask, dtype):
    """A boolean mask (True = not allowed) as an additive float mask; a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype == _C.bool:
        zeros = _C.zeros(tuple(mask.shape), dtype=dtype, device=mask.device)
        return zeros.masked_fill(mask, float("-inf"))
    return mask.to(dtype)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """PyTorch's MHA over (L, N, E) inputs (or unbatched (L, E)); returns (output, weights or None)."""
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: add_bias_kv, add_zero_attn and static_k/v "
                                  "are not supported")
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    if query.dim() != 3:
        raise ValueError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D")
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise ValueError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    if embed_dim % num_heads != 0:
        raise ValueError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    head_dim = embed_dim // num_heads

    if not use_separate_proj_weight:
        w_q, w_k, w_v = in_proj_weight.chunk(3, 0)
    else:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3, 0)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    # (L, N, E) -> (N, heads, L, head_dim)
    def heads(x, length):
        return x.reshape(length, bsz, num_heads, head_dim).permute(1, 2, 0, 3)
    q, k, v = heads(q, tgt_len), heads(k, src_len), heads(v, src_len)

    if is_causal and attn_mask is None:
        attn_mask = _C.ones(tgt_len, src_len, dtype=_C.bool, device=query.device).triu(1)
    mask = _float_mask(attn_mask, q.dtype)
    if mask is not None and mask.dim() == 3:  # (N*heads, L, S)
        mask = mask.reshape(bsz, num_heads, tgt_len, src_len)
    if key_padding_mask is not None:
        kpm = _float_mask(key_padding_mask, q.dtype).reshape(bsz, 1, 1, src_len)
        mask = kpm if mask is None else mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(head_dim))
        if mask is not None:
            scores = scores + mask
        weights = softmax(scores, -1)
        attn = dropout(weights, dropout_p) if dropout_p > 0.0 else weights
        out = attn.matmul(v)
    else:
        weights = None
        out = scaled_dot_product_attention(q, k, v, mask, dropout_p, False)

    out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(1)
    if unbatched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("math", "numbers", "Tensor")]
