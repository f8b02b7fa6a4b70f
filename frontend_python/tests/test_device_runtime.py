"""Streams, events, device properties, memory statistics and options from
Python, on the sim device (testing/sim_device), and loom.cuda /
loom.backends.cuda on a machine without a CUDA plugin or GPU."""
import threading

import pytest

import loom


def kernel_stream(x):
    """The stream handle sim's kernel received (0: the default stream)."""
    return loom.sim_kernel_stream(x).item()  # defined by the sim plugin


@pytest.fixture
def strict_sim():
    # sim then refuses any kernel or copy not on the stream loom made current.
    loom.set_device_option("sim", "sim_strict_streams", "1")
    yield
    loom.set_device_option("sim", "sim_strict_streams", "0")


def test_stream_context_nests_and_restores(strict_sim):
    x = loom.arange(3.0).to("sim")
    s1, s2 = loom.Stream("sim"), loom.Stream("sim")
    assert s1 != s2 and not s1.is_default and s1.device == loom.device("sim")
    assert loom.current_stream("sim") == loom.default_stream("sim")
    assert kernel_stream(x) == 0
    with loom.stream(s1):
        assert loom.current_stream("sim") == s1
        assert kernel_stream(x) == s1.native_handle
        with loom.stream(s2):
            assert kernel_stream(x) == s2.native_handle
            assert (x + x).cpu().tolist() == [0.0, 2.0, 4.0]
            assert (x @ x).item() == 5.0  # through the CPU fallback, still on s2
        assert loom.current_stream("sim") == s1
    assert loom.current_stream("sim").is_default
    with loom.stream(None):
        assert kernel_stream(x) == 0


def test_stream_context_restores_after_an_exception():
    s = loom.Stream("sim")
    with pytest.raises(KeyError):
        with loom.stream(s):
            raise KeyError("boom")
    assert loom.current_stream("sim").is_default


def test_current_stream_is_per_thread():
    s = loom.Stream("sim")
    seen = []
    with loom.stream(s):
        t = threading.Thread(target=lambda: seen.append(loom.current_stream("sim").is_default))
        t.start()
        t.join()
    assert seen == [True]


def test_events_time_work_on_a_stream():
    s = loom.Stream("sim")
    start, end = loom.Event(enable_timing=True), loom.Event(enable_timing=True)
    assert not start.is_recorded and start.device is None
    start.record(s)
    with loom.stream(s):
        y = loom.ones(100, device="sim")
        for _ in range(5):
            y = y + y
    end.record(s)
    end.synchronize()
    s.synchronize()
    assert start.elapsed_time(end) >= 0.0
    assert start.device == loom.device("sim")
    # record() without a stream: the current stream of the event's device.
    e = loom.Event(device="sim")
    e.record()
    assert e.is_recorded
    with pytest.raises(ValueError, match="no device yet"):
        loom.Event().record()
    with pytest.raises(RuntimeError, match="never recorded"):
        loom.Event().elapsed_time(end)


def test_devices_without_streams_or_events_say_so():
    with pytest.raises(RuntimeError, match="device 'cpu:0' has no streams"):
        loom.Stream("cpu")
    with pytest.raises(RuntimeError, match="device 'cpu:0' has no events"):
        loom.Event(device="cpu").record()
    assert loom.current_stream("cpu").is_default
    loom.synchronize("cpu")
    loom.synchronize("sim")


def test_device_properties():
    p = loom.device_properties("sim")
    assert p.name == "loom sim device"
    assert p.total_memory > 0 and p.multi_processor_count == 1
    assert (p.major, p.minor) == (0, 0)
    assert "loom sim device" in repr(p)
    with pytest.raises(RuntimeError, match="device 'cpu:0' has no device properties"):
        loom.device_properties("cpu")


def test_memory_statistics_follow_tensors():
    before = loom.memory_allocated("sim")
    t = loom.empty(256, device="sim")  # float32: 1024 bytes
    assert loom.memory_allocated("sim") == before + 1024
    assert loom.memory_reserved("sim") == loom.memory_allocated("sim")
    assert loom.max_memory_allocated("sim") >= before + 1024
    del t
    assert loom.memory_allocated("sim") == before
    loom.empty_cache("sim")
    loom.reset_peak_memory_stats("sim")
    assert loom.max_memory_allocated("sim") == before
    assert loom.max_memory_reserved("sim") == loom.memory_reserved("sim")
    stats = loom.memory_stats("sim")
    assert stats["num_allocs"] >= 1 and stats["num_cache_hits"] == 0
    # The CPU counts tensors of 8 KiB and more (PyTorch's CPU keeps no statistics).
    base = loom.memory_allocated("cpu")
    big = loom.empty(1 << 16)
    assert loom.memory_allocated("cpu") == base + (1 << 18)
    del big
    assert loom.memory_allocated("cpu") == base
    loom.empty_cache("cpu")


def test_device_options():
    loom.set_device_option("sim", "sim_strict_streams", "0")
    with pytest.raises(RuntimeError, match="unknown option 'nope'"):
        loom.set_device_option("sim", "nope", "1")
    with pytest.raises(RuntimeError, match="device type 'cpu' has no options"):
        loom.set_device_option("cpu", "allow_tf32", "1")


def test_cuda_without_a_gpu_is_unavailable_not_an_error():
    if loom.cuda.is_available():
        # With a GPU the same names must work on it.
        assert loom.cuda.device_count() >= 1
        assert isinstance(loom.cuda.get_device_name(0), str)
        loom.cuda.synchronize()
        assert loom.cuda.memory_allocated() >= 0
        return
    assert loom.cuda.device_count() == 0
    assert loom.cuda.current_device() == 0
    assert loom.cuda.memory_allocated() == 0 and loom.cuda.max_memory_reserved() == 0
    assert loom.cuda.memory_stats() == {}
    loom.cuda.empty_cache()
    with pytest.raises(RuntimeError, match="cuda"):
        loom.cuda.synchronize()
    with pytest.raises(RuntimeError, match="cuda"):
        loom.cuda.get_device_properties(0)
    # Like torch.cuda.Event on a CPU-only machine: made lazily, fails on record.
    e = loom.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="cuda"):
        e.record()


def test_backends_cuda_matmul_allow_tf32():
    matmul = loom.backends.cuda.matmul
    assert matmul.allow_tf32 is False  # PyTorch's default since 1.12
    if loom.cuda.is_available():
        return  # the plugin's own tests check what the option does
    matmul.allow_tf32 = True
    assert matmul.allow_tf32 is True
    matmul.allow_tf32 = False
    assert matmul.allow_tf32 is False


def test_backends_cuda_set_attention_kernels():
    with pytest.raises(ValueError, match="'auto', 'always' or 'never', got 'sometimes'"):
        loom.backends.cuda.set_attention_kernels("sometimes")
    for mode in ("always", "never", "auto"):  # handed to the plugin where there is a GPU
        loom.backends.cuda.set_attention_kernels(mode)


def test_cuda_stream_and_event_are_the_generic_ones():
    assert issubclass(loom.cuda.Stream, loom.Stream)
    assert issubclass(loom.cuda.Event, loom.Event)
    assert loom.cuda.stream is loom.stream
