"""BatchNorm1d, BatchNorm2d: batch statistics in training, running statistics in eval."""
from ... import _C
from .. import functional as F
from .. import init
from ..module import Module
from ._params import add_parameter, reset_affine


class _BatchNorm(Module):
    _expected_dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        add_parameter(self, "weight", (num_features,), affine, device, dtype)
        add_parameter(self, "bias", (num_features,), affine, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _C.zeros((num_features,), device=device, dtype=dtype))
            self.register_buffer("running_var", _C.ones((num_features,), device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", _C.tensor(0, dtype=_C.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.fill_(0)

    def reset_parameters(self):
        self.reset_running_stats()
        reset_affine(self.weight, self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._expected_dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._expected_dims)} input "
                             f"(got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        exponential_average_factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                exponential_average_factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        # Running stats are passed when they are to be used (eval) or updated (training with tracking).
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias, bn_training,
                            exponential_average_factor, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        # Checkpoints from before num_batches_tracked existed load with it at 0 (PyTorch does the same).
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict:
            state_dict = dict(state_dict)
            state_dict[key] = _C.tensor(0, dtype=_C.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Over (N, C) or (N, C, L)."""
    _expected_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over (N, C, H, W)."""
    _expected_dims = (4,)
