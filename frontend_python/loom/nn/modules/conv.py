"""Conv1d, Conv2d, ConvTranspose2d."""
from .. import functional as F
from ..module import Module
from ._params import add_parameter, reset_kaiming_uniform

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    def __init__(self, nd, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in F._pair(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got padding_mode='{padding_mode}'")
        if padding_mode == "circular":
            raise NotImplementedError("padding_mode='circular' is not supported (loom.pad lacks it)")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = tuple(F._pair(kernel_size, nd, "kernel_size"))
        self.stride = tuple(F._pair(stride, nd, "stride"))
        self.padding = padding if isinstance(padding, str) else tuple(F._pair(padding, nd, "padding"))
        self.dilation = tuple(F._pair(dilation, nd, "dilation"))
        self.transposed = transposed
        self.output_padding = tuple(F._pair(output_padding, nd, "output_padding"))
        self.groups = groups
        self.padding_mode = padding_mode
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        add_parameter(self, "weight", shape, True, device, dtype)
        add_parameter(self, "bias", (out_channels,), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_kaiming_uniform(self.weight, self.bias)

    def forward(self, input):
        conv = F.conv1d if len(self.kernel_size) == 1 else F.conv2d
        if self.padding_mode != "zeros" and not isinstance(self.padding, str):
            # Pad with F.pad in that mode, then convolve without padding.
            pads = []
            for p in reversed(self.padding):
                pads += [p, p]
            return conv(F.pad(input, pads, self.padding_mode), self.weight, self.bias, self.stride, 0,
                        self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__, bias=self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) (or unbatched (C_in, L))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) (or unbatched (C_in, H, W))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups,
                         bias, padding_mode, device, dtype)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution; weight of shape (C_in, C_out / groups, kH, kW)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__} does not support string padding")
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation, True,
                         output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the output ``output_size`` (PyTorch's rule)."""
        if output_size is None:
            return list(self.output_padding)
        output_size = list(output_size)
        k = len(self.kernel_size)
        if len(output_size) == k + 2 or len(output_size) == k + 1:
            output_size = output_size[-k:]
        if len(output_size) != k:
            raise ValueError(f"ConvTranspose2d: output_size must have {k} or {k + 2} elements (got "
                             f"{len(output_size)})")
        result = []
        for d in range(k):
            dim_size = input.shape[input.dim() - k + d]
            min_size = ((dim_size - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            max_size = min_size + self.stride[d] - 1
            if not min_size <= output_size[d] <= max_size:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_size} to {max_size} (for an input of {tuple(input.shape[-k:])})")
            result.append(output_size[d] - min_size)
        return result

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)
