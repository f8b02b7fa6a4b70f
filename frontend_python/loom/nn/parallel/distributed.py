"""DistributedDataParallel: data-parallel training over loom.distributed.

As PyTorch's: the constructor broadcasts the module's parameters and buffers
from the group's first rank; during backward each parameter's gradient is
copied into a bucket (parameters in reverse registration order, about the
order their gradients arrive, `bucket_cap_mb` each, 25 MiB by default) and a
bucket is all-reduced asynchronously as soon as all its gradients are in, so
the communication overlaps the rest of backward; before backward returns (an
autograd callback) every bucket is waited for and each .grad holds the
average over the ranks. `no_sync()` skips the reduction, so gradients
accumulate locally over several backward passes and the next synchronised
one reduces the accumulated sum; `find_unused_parameters=True` lets
parameters that got no gradient in a step take part as their .grad (zeros
when they have none).

The buckets, hooks and all-reduces are the C++ frontend's
(loom::nn::parallel::GradientReducer, loom/nn/parallel/distributed.h): one
implementation for both frontends, and backward runs them without the GIL.
"""
import contextlib

from .. import Module
from ... import _C
from ... import distributed as _dist


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not _dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: call loom.distributed.init_process_group first")
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.bucket_cap_mb = bucket_cap_mb
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self._reducer = _C._GradientReducer(
            list(module.named_parameters()), list(module.buffers()),
            process_group=process_group, bucket_cap_mb=float(bucket_cap_mb),
            find_unused_parameters=find_unused_parameters, broadcast_buffers=broadcast_buffers,
            gradient_as_bucket_view=gradient_as_bucket_view)

    def forward(self, *inputs, **kwargs):
        self._reducer.before_forward()  # broadcasts the buffers when due
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of backward passes inside accumulate locally, unreduced."""
        old = self._reducer.require_sync
        self._reducer.require_sync = False
        try:
            yield
        finally:
            self._reducer.require_sync = old

    def state_dict(self, *args, **kwargs):
        return self.module.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self.module.load_state_dict(*args, **kwargs)
