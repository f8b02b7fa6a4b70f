"""loom.distributed: torch.distributed's process groups and collectives.

Backends are communication plugins (plugin_api/loom/comm_api.h) found by
the registry like device plugins: "gloo" for cpu tensors. Rendezvous is
env:// (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), tcp://host:port or
file:///path. See docs/distributed.md.

    import loom.distributed as dist
    dist.init_process_group("gloo")
    dist.all_reduce(t, op=dist.ReduceOp.AVG)

Not yet: the bitwise reduce ops.
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


def host_copy_stats():
    """{(op, device type): how often the op communicated that device's tensors through host
    copies} — devices without a communication plugin of their own reach gloo that way,
    counted and warned about as LOOM_FALLBACK says, like loom.fallback_stats()."""
    return _C._dist_host_copy_stats()


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
    """Chunks of dim 0 to each rank: equal ones, or `input_split_sizes[j]` rows to rank j and
    `output_split_sizes[j]` rows from rank j."""
    return _work(_C._dist_all_to_all_single(output, input, [int(n) for n in output_split_sizes or []],
                                            [int(n) for n in input_split_sizes or []], group, async_op), async_op)


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


# ---- object collectives: picklable Python objects, as bytes in uint8 tensors

def _object_device(group):
    # The tensors of the group's backend: cpu for gloo, the rank's GPU for nccl.
    if get_backend(group) == Backend.NCCL:
        import os
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    return "cpu"


def _to_bytes_tensor(obj, device):
    import pickle
    import numpy as np
    from .. import tensor as _tensor, uint8 as _uint8
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    return _tensor(data.copy(), dtype=_uint8).to(device), int(data.size)


def _from_bytes_tensor(t, size):
    import pickle
    return pickle.loads(t[:size].cpu().numpy().tobytes())


def _sizes(size, group, device):
    from .. import tensor as _tensor, int64 as _int64, zeros as _zeros
    world = get_world_size(group)
    mine = _tensor([size], dtype=_int64).to(device)
    every = [_zeros(1, dtype=_int64).to(device) for _ in range(world)]
    all_gather(every, mine, group=group)
    return [int(s.cpu().item()) for s in every]


def all_gather_object(object_list, obj, group=None):
    """Fills object_list (one slot per rank) with every rank's obj (pickled)."""
    from .. import zeros as _zeros, uint8 as _uint8
    device = _object_device(group)
    data, size = _to_bytes_tensor(obj, device)
    sizes = _sizes(size, group, device)
    longest = max(sizes)
    padded = _zeros(longest, dtype=_uint8).to(device)
    padded[:size] = data
    out = [_zeros(longest, dtype=_uint8).to(device) for _ in sizes]
    all_gather(out, padded, group=group)
    for i, (t, n) in enumerate(zip(out, sizes)):
        object_list[i] = _from_bytes_tensor(t, n)


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """On dst, fills object_gather_list with every rank's obj; elsewhere it is ignored."""
    gathered = [None] * get_world_size(group)
    all_gather_object(gathered, obj, group=group)
    if get_rank() == dst:
        if object_gather_list is None or len(object_gather_list) != len(gathered):
            raise ValueError(f"gather_object: the destination rank needs an object_gather_list of "
                             f"{len(gathered)} slots")
        object_gather_list[:] = gathered


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Every rank's object_list becomes src's (each rank passes a list of the same length)."""
    from .. import tensor as _tensor, int64 as _int64, empty as _empty, uint8 as _uint8, cat as _cat
    if not object_list:
        return
    device = device or _object_device(group)
    is_src = get_rank() == src
    if is_src:
        encoded = [_to_bytes_tensor(o, device) for o in object_list]
        sizes = _tensor([n for _, n in encoded], dtype=_int64).to(device)
    else:
        sizes = _empty(len(object_list), dtype=_int64).to(device)
    broadcast(sizes, src, group=group)
    sizes = [int(n) for n in sizes.cpu().tolist()]
    flat = _cat([t for t, _ in encoded]) if is_src else _empty(sum(sizes), dtype=_uint8).to(device)
    broadcast(flat, src, group=group)  # a pickle is never empty: every rank takes part
    if is_src:
        return
    offset = 0
    for i, n in enumerate(sizes):
        object_list[i] = _from_bytes_tensor(flat[offset:offset + n], n)
        offset += n


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None):
    """scatter_object_output_list[0] becomes src's scatter_object_input_list[rank]."""
    world = get_world_size(group)
    items = list(scatter_object_input_list) if get_rank() == src else [None] * world
    if get_rank() == src and len(items) != world:
        raise ValueError(f"scatter_object_list: the source rank needs {world} objects, got {len(items)}")
    broadcast_object_list(items, src=src, group=group)
    scatter_object_output_list[0] = items[get_rank(group) if group is not None else get_rank()]
