"""DistributedDataParallel: data-parallel training over loom.distributed.

As PyTorch's: the constructor broadcasts the module's parameters and buffers
from the group's first rank; during backward each parameter's gradient joins
a bucket (parameters in reverse registration order, about the order their
gradients arrive, `bucket_cap_mb` each, 25 MiB by default) and a bucket is
all-reduced asynchronously as soon as all its gradients are in, so the
communication overlaps the rest of backward; before backward returns (an
autograd callback) every bucket is waited for and each .grad holds the
average over the ranks. `no_sync()` skips the reduction, so gradients
accumulate locally over several backward passes and the next synchronised
one reduces the accumulated sum; `find_unused_parameters=True` lets
parameters that got no gradient in a step take part as zeros.
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
        self._world = _dist.get_world_size(process_group)
        ranks = process_group.global_ranks() if process_group is not None else [0]
        self._src = ranks[0]
        self._require_sync = True
        import loom
        with loom.no_grad():
            for t in list(module.parameters()) + list(module.buffers()):
                _dist.broadcast(t, self._src, group=process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        self._params = params
        # Buckets of parameter indices, last parameters first.
        cap = int(bucket_cap_mb * 1024 * 1024)
        self._buckets, current, size = [], [], 0
        for i in reversed(range(len(params))):
            nbytes = params[i].numel() * params[i].element_size()
            if current and size + nbytes > cap:
                self._buckets.append(current)
                current, size = [], 0
            current.append(i)
            size += nbytes
        if current:
            self._buckets.append(current)
        self._bucket_of = {}
        for b, members in enumerate(self._buckets):
            for i in members:
                self._bucket_of[i] = b
        self._handles = [p.register_hook(self._make_hook(i)) for i, p in enumerate(params)]
        self._reset()

    def _reset(self):
        self._pending = [dict() for _ in self._buckets]  # param index -> its full gradient
        self._works = {}  # bucket -> (flat tensor, work)
        self._callback_queued = False

    def forward(self, *inputs, **kwargs):
        import loom
        if self.broadcast_buffers and self._require_sync and loom.is_grad_enabled():
            with loom.no_grad():
                for b in self.module.buffers():
                    _dist.broadcast(b, self._src, group=self.process_group)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of backward passes inside accumulate locally, unreduced."""
        old = self._require_sync
        self._require_sync = False
        try:
            yield
        finally:
            self._require_sync = old

    def _make_hook(self, i):
        def hook(grad):
            if not self._require_sync:
                return grad
            if not self._callback_queued:
                _C._queue_callback(self._finalize)
                self._callback_queued = True
            p = self._params[i]
            # What .grad will hold once this gradient is accumulated: the
            # reduction must see gradients accumulated under no_sync too.
            full = grad if p.grad is None else p.grad + grad
            b = self._bucket_of[i]
            self._pending[b][i] = full
            if len(self._pending[b]) == len(self._buckets[b]):
                self._launch(b)
            return grad
        return hook

    def _launch(self, b):
        import loom
        members = self._buckets[b]
        with loom.no_grad():
            flat = loom.cat([self._pending[b][i].reshape(-1) for i in members])
        self._works[b] = (flat, _dist.all_reduce(flat, group=self.process_group, async_op=True))

    def _finalize(self):
        import loom
        try:
            for b, members in enumerate(self._buckets):
                if b in self._works:
                    continue
                missing = [i for i in members if i not in self._pending[b]]
                if missing and not self.find_unused_parameters:
                    names = [n for n, p in self.module.named_parameters()
                             if any(p is self._params[i] for i in missing)]
                    raise RuntimeError(
                        "DistributedDataParallel: parameters got no gradient in this backward pass: "
                        f"{', '.join(names) or missing}; pass find_unused_parameters=True if the model "
                        "does not use every parameter in every step")
                for i in missing:
                    p = self._params[i]
                    self._pending[b][i] = p.grad if p.grad is not None else loom.zeros_like(p)
                self._launch(b)
            with loom.no_grad():
                for b, members in enumerate(self._buckets):
                    flat, work = self._works[b]
                    work.wait()
                    flat.div_(self._world)
                    offset = 0
                    for i in members:
                        p = self._params[i]
                        n = p.numel()
                        avg = flat[offset:offset + n].reshape(p.shape)
                        offset += n
                        if p.grad is None:
                            p.grad = avg.clone()
                        else:
                            p.grad.copy_(avg)
        finally:
            self._reset()

    def state_dict(self, *args, **kwargs):
        return self.module.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self.module.load_state_dict(*args, **kwargs)
