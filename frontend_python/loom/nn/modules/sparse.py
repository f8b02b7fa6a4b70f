"""Embedding."""
from ... import _C
from ..._grad_mode import no_grad
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised N(0, 1).

    The ``padding_idx`` row starts at zero and gets no gradient.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        if max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: max_norm, scale_grad_by_freq and sparse are not supported")
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= num_embeddings:
                    raise ValueError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -num_embeddings:
                    raise ValueError("Padding_idx must be within num_embeddings")
                padding_idx = num_embeddings + padding_idx
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(_C.empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight.select(0, self.padding_idx).fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (2-D); frozen unless freeze=False."""
        if embeddings.dim() != 2:
            raise ValueError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)
