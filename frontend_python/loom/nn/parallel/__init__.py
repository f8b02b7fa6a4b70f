"""loom.nn.parallel: DataParallel and DistributedDataParallel's names.

DataParallel on one device (or none) runs the wrapped module as it is, as
PyTorch's does; splitting a batch over several GPUs is not implemented yet
and says so. DistributedDataParallel (distributed.py) trains over
loom.distributed's process groups.
"""
from .. import Module
from .distributed import DistributedDataParallel  # noqa: F401


class DataParallel(Module):
    """Wraps `module`; forward runs it on the whole batch (one device)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        from ... import cuda
        ids = list(device_ids) if device_ids is not None else list(range(cuda.device_count()))
        if len(ids) > 1:
            raise NotImplementedError(f"DataParallel over {len(ids)} GPUs is not implemented in loom yet; "
                                      "pass device_ids=[0] to run on one")
        self.module, self.device_ids, self.output_device, self.dim = module, ids, output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    return DataParallel(module, device_ids, output_device, dim)(*(inputs if isinstance(inputs, tuple) else (inputs,)),
                                                                **(module_kwargs or {}))
