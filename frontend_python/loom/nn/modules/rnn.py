"""RNN, LSTM, GRU and their cells, as torch.nn.

The sequence layers run the catalog's fused ``_rnn`` op (a device runs its own fused kernel, or the
core's composite), all layers at once; with dropout > 0 in training, layer by layer with dropout
between. Parameters are named and initialised as PyTorch's (weight_ih_l0, weight_hh_l0_reverse, ...;
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))), so state dicts move between the two.
"""
import math
import numbers

import loom as _loom

from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"hidden_size must be a positive int, got {hidden_size!r}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"num_layers must be a positive int, got {num_layers!r}")
        if proj_size:
            raise NotImplementedError("LSTM(proj_size=...) is not implemented in loom yet")
        if dropout > 0 and num_layers == 1:
            import warnings
            warnings.warn(f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(directions):
                layer_input = input_size if layer == 0 else hidden_size * directions
                suffix = f"_l{layer}" + ("_reverse" if d == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(_loom.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        per = 4 if self.bias else 2
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """PyTorch packs cuDNN's weights here; loom's kernels take the parameters as they are."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def _run(self, input, hx, cx, batch_sizes):
        """The fused op over every layer, or layer by layer with dropout between them in training."""
        params = self._flat_weights
        packed = batch_sizes is not None
        sizes = [int(b) for b in batch_sizes.tolist()] if packed else None
        if not (self.dropout > 0 and self.training and self.num_layers > 1):
            return _loom._rnn(input, hx, cx, params, self.mode, self.bias, self.num_layers, self.bidirectional,
                              self.batch_first and not packed, sizes)
        D = 2 if self.bidirectional else 1
        per = (4 if self.bias else 2) * D
        hys, cys, x = [], [], input
        for layer in range(self.num_layers):
            h = hx[layer * D:(layer + 1) * D]
            c = cx[layer * D:(layer + 1) * D] if cx is not None else None
            x, hy, cy = _loom._rnn(x, h, c, params[layer * per:(layer + 1) * per], self.mode, self.bias, 1,
                                   self.bidirectional, self.batch_first and not packed, sizes)
            if layer + 1 < self.num_layers:
                x = F.dropout(x, self.dropout, True)
            hys.append(hy)
            cys.append(cy)
        cy = _loom.cat(cys, 0) if cx is not None else cys[0]
        return x, _loom.cat(hys, 0), cy

    def _check_input(self, input, batch_sizes):
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise ValueError(f"input must have {expected} dimensions, got {input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")

    def _state_shape(self, batch):
        return ((2 if self.bidirectional else 1) * self.num_layers, batch, self.hidden_size)

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch = int(batch_sizes[0])
            unbatched = False
        else:
            data, batch_sizes, sorted_indices, unsorted_indices = input, None, None, None
            unbatched = input.dim() == 2
            if unbatched:
                data = input.unsqueeze(1 if not self.batch_first else 0)
            batch = data.shape[0 if self.batch_first else 1]
        self._check_input(data, batch_sizes)
        lstm = self.mode == "LSTM"
        if hx is None:
            zeros = _loom.zeros(self._state_shape(batch), dtype=data.dtype, device=data.device)
            h, c = zeros, (zeros if lstm else None)
        else:
            if lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError("LSTM expects hx as a tuple (h_0, c_0)")
                h, c = hx
            else:
                h, c = hx, None
            if unbatched:
                h = h.unsqueeze(1)
                c = c.unsqueeze(1) if c is not None else None
            if sorted_indices is not None:  # the states follow the packed batch's order
                h = h.index_select(1, sorted_indices)
                c = c.index_select(1, sorted_indices) if c is not None else None
            for name, t in (("h_0", h), ("c_0", c)):
                if t is not None and tuple(t.shape) != self._state_shape(batch):
                    raise RuntimeError(f"Expected hidden size {self._state_shape(batch)}, got {tuple(t.shape)} "
                                       f"(for {name})")
        output, hy, cy = self._run(data, h, c, batch_sizes)
        if unsorted_indices is not None:
            hy = hy.index_select(1, unsorted_indices)
            cy = cy.index_select(1, unsorted_indices) if lstm else cy
        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        elif unbatched:
            output = output.squeeze(1 if not self.batch_first else 0)
            hy = hy.squeeze(1)
            cy = cy.squeeze(1) if lstm else cy
        return output, ((hy, cy) if lstm else hy)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh (or relu)(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if "nonlinearity" in kwargs:
            nonlinearity = kwargs.pop("nonlinearity")
        if len(args) > 3:  # torch's positional (input_size, hidden_size, num_layers, nonlinearity, ...)
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; forward returns (output, (h_n, c_n))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit; forward returns (output, h_n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(_loom.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(_loom.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_loom.empty((num_chunks * hidden_size,), device=device, dtype=dtype))
            self.bias_hh = Parameter(_loom.empty((num_chunks * hidden_size,), device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        return s

    def _prepare(self, input, hx):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        unbatched = input.dim() == 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        zeros = _loom.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        return input, unbatched, zeros


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        input, unbatched, zeros = self._prepare(input, hx)
        h = zeros if hx is None else (hx.unsqueeze(0) if unbatched else hx)
        cell = _loom.rnn_tanh_cell if self.nonlinearity == "tanh" else _loom.rnn_relu_cell
        out = cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, unbatched, zeros = self._prepare(input, hx)
        if hx is None:
            h, c = zeros, zeros
        else:
            h, c = hx
            if unbatched:
                h, c = h.unsqueeze(0), c.unsqueeze(0)
        hy, cy = _loom.lstm_cell(input, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (hy.squeeze(0), cy.squeeze(0)) if unbatched else (hy, cy)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, unbatched, zeros = self._prepare(input, hx)
        h = zeros if hx is None else (hx.unsqueeze(0) if unbatched else hx)
        out = _loom.gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out.squeeze(0) if unbatched else out
