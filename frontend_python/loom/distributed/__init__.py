"""loom.distributed: importable now, so programs that check for it run.

The collectives, process groups and launcher come with the distributed
training issue (Gloo and NCCL as communication plugins). Until then
``is_available()`` is False, ``is_initialized()`` False, and every call that
would need a process group raises a RuntimeError saying so, as a PyTorch
build without distributed support does.
"""

_NOT_YET = ("loom.distributed is not available in this build: collectives (Gloo, NCCL) are not implemented yet. "
            "Check loom.distributed.is_available() before using it.")


def is_available():
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


def _unavailable(name):
    def fn(*args, **kwargs):
        raise RuntimeError(f"{name}: {_NOT_YET}")
    fn.__name__ = name
    return fn


for _name in ("init_process_group", "destroy_process_group", "get_rank", "get_world_size", "barrier",
              "all_reduce", "all_gather", "broadcast", "reduce", "reduce_scatter", "gather", "scatter",
              "new_group", "get_backend", "send", "recv", "isend", "irecv", "all_gather_object",
              "broadcast_object_list"):
    globals()[_name] = _unavailable(_name)


class ReduceOp:
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG = "sum", "product", "min", "max", "band", "bor", "bxor", "avg"
