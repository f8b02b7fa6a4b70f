"""loom.profiler — where a program's time goes, op by op, in torch.profiler's shape.

    with loom.profiler.profile() as prof:
        train_step()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=20))

Every op call on the profiling thread (backward's included) is recorded with
its host time, and, on a device whose plugin has events (CUDA, HIP, sim),
its device time, measured with events around the call on the current
stream. Inner calls (a composite's ops, the CPU fallback's) count in their
caller's total but not its self time. The table lists ops by total device
time where there is one, else by total host time (loom/profiler.h).
"""
from . import _C

__all__ = ["profile", "ProfilerActivity", "record_function"]


class ProfilerActivity:
    """Accepted for torch.profiler's signature: loom records host time always
    and device time wherever the device has events."""
    CPU = "cpu"
    CUDA = "cuda"


class FunctionEventAvg:
    """One op's calls together (torch.autograd.profiler_util.FunctionEventAvg's
    fields, times in microseconds as torch reports them)."""

    def __init__(self, name, calls, host_total_ms, host_self_ms, device_ms):
        self.key = name
        self.count = calls
        self.cpu_time_total = host_total_ms * 1e3
        self.self_cpu_time_total = host_self_ms * 1e3
        self.cuda_time_total = 0.0 if device_ms is None else device_ms * 1e3
        self.device_time_total = self.cuda_time_total
        self.cpu_time = self.cpu_time_total / calls
        self.cuda_time = self.cuda_time_total / calls

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.1f}us "
                f"cuda_time_total={self.cuda_time_total:.1f}us>")


class EventList(list):
    """key_averages()'s result: FunctionEventAvg per op, and table()."""

    def __init__(self, profile, sort_by=""):
        super().__init__(FunctionEventAvg(*row) for row in profile.key_averages(sort_by))
        self._profile = profile

    def table(self, sort_by=None, row_limit=100, **_ignored):
        """The ops as a text table, sorted by `sort_by` (cpu_time_total,
        self_cpu_time_total, cuda_time_total / device_time_total, count;
        default: device time where any, else host time); row_limit <= 0
        prints every op."""
        return self._profile.table(max(row_limit, 0), sort_by or "")


class profile:
    """Records the op calls made on this thread while the `with` block runs.

    The keyword arguments of torch.profiler.profile (activities,
    record_shapes, profile_memory, with_stack ...) are accepted and ignored."""

    def __init__(self, activities=None, **_ignored):
        self._profile = None

    def start(self):
        """Begins recording (as entering the `with` block does)."""
        self._profile = _C._Profile()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self._profile.stop()
        return False

    def stop(self):
        self._profile.stop()

    def key_averages(self, sort_by=""):
        return EventList(self._profile, sort_by)

    def events(self):
        """(name, device, depth, start_us, end_us, device_ms or None) per call, in call order."""
        return self._profile.events()


class record_function:
    """A labelled range of the program, listed in the table like an op, with
    the ops called inside it (torch.profiler.record_function)."""

    def __init__(self, name):
        self.name = name
        self._range = _C._RecordFunction(name)

    def __enter__(self):
        self._range.enter()
        return self

    def __exit__(self, *exc):
        self._range.exit()
        return False
