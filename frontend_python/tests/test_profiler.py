"""loom.profiler: torch.profiler's shape over loom's own per-op recording
(core/include/loom/profiler.h)."""
import loom
import pytest


def _names(prof):
    return [e[0] for e in prof.events()]


def test_profile_records_forward_and_backward_ops():
    x = loom.ones(8, 8, requires_grad=True)
    w = loom.ones(8, 8)
    with loom.profiler.profile() as prof:
        loss = (x @ w).relu().sum()
        loss.backward()
    names = _names(prof)
    for op in ("matmul", "relu", "sum"):
        assert op in names
    avgs = prof.key_averages()
    by_key = {a.key: a for a in avgs}
    assert by_key["sum"].count >= 1  # the forward sum (backward may sum too)
    assert by_key["matmul"].cpu_time_total >= by_key["matmul"].self_cpu_time_total >= 0
    assert by_key["matmul"].cuda_time_total == 0.0  # the CPU has no device time
    # Sorted by total host time by default on the CPU.
    totals = [a.cpu_time_total for a in avgs]
    assert totals == sorted(totals, reverse=True)


def test_table_sort_keys_and_row_limit():
    a = loom.ones(16, 16)
    with loom.profiler.profile(activities=[loom.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(3):
            a = a + 1
        a.exp()
    text = prof.key_averages().table(sort_by="count", row_limit=1)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["Name", "Calls"]
    assert lines[2].split()[0] == "add" and lines[2].split()[1] == "3"
    assert "more ops" in text and "Host time in ops" in text
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="flops")


def test_record_function_holds_its_ops_one_level_deeper():
    a = loom.ones(4)
    with loom.profiler.profile() as prof:
        with loom.profiler.record_function("data step"):
            a.neg()
        a.exp()
    events = {e[0]: e for e in prof.events()}
    assert events["data step"][2] == 0
    assert events["neg"][2] == 1
    assert events["exp"][2] == 0
    assert "data step" in prof.key_averages().table()


def test_device_time_on_a_device_with_events():
    a = loom.ones(8, device="sim")
    with loom.profiler.profile() as prof:
        a * a
    (mul,) = [e for e in prof.events() if e[0] == "mul"]
    assert mul[1] == "sim:0"
    assert mul[5] is not None and mul[5] >= 0
    assert "device time" in prof.key_averages().table()
