"""Out of memory in Python: loom.OutOfMemoryError (a RuntimeError, like
torch.cuda.OutOfMemoryError) naming the device and the bytes, on every
device; never an abort, including for sizes whose byte count overflows."""
import pytest

import loom

HUGE = 1 << 50  # 4 PiB of float32


DEVICES = ["cpu", "sim", pytest.param("cuda", marks=pytest.mark.skipif(not loom.cuda.is_available(),
                                                                     reason="no CUDA device"))]


@pytest.mark.parametrize("device", DEVICES)
def test_impossible_allocation_raises_out_of_memory(device):
    with pytest.raises(loom.OutOfMemoryError,
                       match=f"allocating {HUGE * 4} bytes on {device}:0") as info:
        loom.empty(HUGE, dtype=loom.float32, device=device)
    assert isinstance(info.value, RuntimeError)
    if device == "cuda":  # the caching allocator's account (issue 8): requested, free, reserved, allocated
        for word in ("tried to allocate 4194304.00 GiB", "free", "reserved", "allocated"):
            assert word in str(info.value)
    # The device keeps working.
    t = loom.ones(3, device=device)
    assert (t + t).cpu().tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("device", DEVICES)
def test_byte_count_overflow_is_refused(device):
    with pytest.raises(loom.OutOfMemoryError, match="more than 2\\^63 bytes"):
        loom.empty(1 << 40, 1 << 40, device=device)
    with pytest.raises(RuntimeError, match="float64"):
        loom.empty(1 << 61, dtype=loom.float64, device=device)


def test_cuda_module_names_the_same_class():
    assert loom.cuda.OutOfMemoryError is loom.OutOfMemoryError
    assert issubclass(loom.OutOfMemoryError, RuntimeError)


def test_other_errors_are_not_out_of_memory():
    with pytest.raises(RuntimeError) as info:
        loom.ones(2, 3) + loom.ones(4, 5)
    assert not isinstance(info.value, loom.OutOfMemoryError)
