"""loom.distributed: torch.distributed's process groups and collectives.

Backends are communication plugins (plugin_api/loom/comm_api.h) found by
the registry like device plugins: "gloo" for cpu tensors. Rendezvous is
env:// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), tcp://host:port or
file:///path. See docs/distributed.md.

    import loom.distributed as dist
    dist.init_process_group("gloo")
    dist.all_reduce(t, op=dist.ReduceOp.AVG)

Not yet: the nccl backend, object collectives (all_gather_object,
broadcast_object_list) and the bitwise reduce ops.
"""
import datetime as _datetime

from .. import _C

_DEFAULT_TIMEOUT = _datetime.timedelta(minutes=30)


class ReduceOp:
    """The reduction of all_reduce, reduce and reduce_scatter_tensor."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


class Backend:
    GLOO = "gloo"
    NCCL = "nccl"


# A process group object as torch.distributed returns from new_group.
ProcessGroup = _C._DistProcessGroup
Work = _C._DistWork

_backend_name = None


def is_available():
    """True: this build has loom.distributed (backends are plugins: see is_gloo_available)."""
    return True


def is_gloo_available():
    return "gloo" in _comm_backends()


def is_nccl_available():
    return "nccl" in _comm_backends()


def is_mpi_available():
    return False


def is_torchelastic_launched():
    import os
    return "TORCHELASTIC_RUN_ID" in os.environ


def _comm_backends():
    out = set()
    for p in _C.plugins():
        for b in p.get("comm_backends", []):
            if p.get("state") != "failed":
                out.add(b)
    return out


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None):
    """Joins the default process group (every rank calls it). backend: "gloo"
    (the default) or another installed communication plugin's name."""
    global _backend_name
    if store is not None:
        raise NotImplementedError("init_process_group(store=...): pass init_method instead (env://, tcp://, file://)")
    backend = (backend or "gloo").lower()
    if timeout is None:
        timeout = _DEFAULT_TIMEOUT
    seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    _C._dist_init(backend, init_method or "env://", int(world_size), int(rank), seconds)
    _backend_name = backend


def destroy_process_group(group=None):
    global _backend_name
    if group is not None:
        return  # a subgroup goes with its last reference
    _C._dist_destroy()
    _backend_name = None


def is_initialized():
    return _C._dist_is_initialized()


def get_rank(group=None):
    if group is not None:
        return group.rank()
    return _C._dist_rank() if is_initialized() else -1


def get_world_size(group=None):
    if group is not None:
        return group.size()
    return _C._dist_world_size() if is_initialized() else -1


def get_backend(group=None):
    return group.backend() if group is not None else _C._dist_backend()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None):
    """A group of `ranks` (global ranks; all of them when None). Every process
    calls it; a process outside `ranks` gets None."""
    if ranks is None:
        ranks = list(range(get_world_size()))
    return _C._dist_new_group([int(r) for r in ranks])


def _work(w, async_op):
    return w if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    return _work(_C._dist_all_reduce(tensor, op, group, async_op), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    return _work(_C._dist_broadcast(tensor, int(src), group, async_op), async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    return _work(_C._dist_reduce(tensor, int(dst), op, group, async_op), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    return _work(_C._dist_all_gather(list(tensor_list), tensor, group, async_op), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    return _work(_C._dist_all_gather_into_tensor(output_tensor, input_tensor, group, async_op), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    return _work(_C._dist_reduce_scatter_tensor(output, input, op, group, async_op), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    if output_split_sizes is not None or input_split_sizes is not None:
        raise NotImplementedError("all_to_all_single: uneven splits are not supported yet (equal chunks are)")
    return _work(_C._dist_all_to_all_single(output, input, group, async_op), async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    _C._dist_gather(tensor, None if gather_list is None else list(gather_list), int(dst), group)
    return None


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    return _work(_C._dist_scatter(tensor, None if scatter_list is None else list(scatter_list), int(src), group,
                                  async_op), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    return _work(_C._dist_barrier(group, async_op), async_op)


def isend(tensor, dst, group=None, tag=0):
    return _C._dist_isend(tensor, int(dst), group, int(tag))


def irecv(tensor, src=None, group=None, tag=0):
    if src is None:
        raise NotImplementedError("irecv from any source is not supported: give src")
    return _C._dist_irecv(tensor, int(src), group, int(tag))


def send(tensor, dst, group=None, tag=0):
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src=None, group=None, tag=0):
    irecv(tensor, src, group, tag).wait()
    return src
