"""TransformerEncoderLayer, TransformerEncoder."""
import copy

from .. import functional as F
from ..module import Module
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .normalization import LayerNorm


def _activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention + feed-forward block (post-norm by default, pre-norm with norm_first)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        f = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **f)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **f)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **f)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **f)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        # A Module activation (nn.GELU()) registers as a child, like PyTorch; a function stays an attribute.
        self.activation = _activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal and attn_mask is None)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` applied in turn, then an optional norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                         is_causal=bool(is_causal))
        if self.norm is not None:
            output = self.norm(output)
        return output
