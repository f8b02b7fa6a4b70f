"""Pinned host memory, non-blocking copies and stream ordering from Python, on the sim device:
its copies of pinned memory stay queued on their stream until something waits for them, so
these tests see where loom waits and where it does not."""
import warnings

import pytest

import loom
from loom.utils.data import DataLoader, TensorDataset


def test_pin_memory_and_is_pinned():
    x = loom.arange(6.0).reshape(2, 3)
    assert not x.is_pinned()
    p = x.pin_memory("sim")
    assert p.is_pinned() and p.device == loom.device("cpu")
    assert p.tolist() == x.tolist()
    assert p.pin_memory("sim").data_ptr() == p.data_ptr()
    assert loom.zeros(3, pin_memory=False).is_pinned() is False
    with pytest.raises(RuntimeError, match="only tensors in host memory can be pinned"):
        x.to("sim").pin_memory("sim")
    with pytest.raises(RuntimeError, match="has no pinned host memory"):
        x.pin_memory("cpu")


def test_non_blocking_copy_to_the_device_is_queued_until_a_wait():
    host = loom.arange(4.0).pin_memory("sim")
    dev = host.to("sim", non_blocking=True)
    stream = loom.default_stream("sim")
    assert not stream.query()
    host.numpy()[0] = 100.0  # sim runs the queued copy later: it sees the write
    stream.synchronize()
    assert stream.query()
    assert dev.cpu().tolist() == [100.0, 1.0, 2.0, 3.0]


def test_blocking_copy_from_pinned_memory_is_complete():
    host = loom.arange(4.0).pin_memory("sim")
    dev = host.to("sim")
    host.numpy()[0] = 100.0
    assert dev.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]


def test_non_blocking_copy_to_the_host_lands_in_pinned_memory():
    dev = loom.arange(3.0).to("sim")
    back = dev.to("cpu", non_blocking=True)
    assert back.is_pinned()
    event = loom.Event()
    event.record(loom.current_stream("sim"))
    assert not event.query()
    event.synchronize()
    assert event.query()
    assert back.tolist() == [0.0, 1.0, 2.0]


def test_wait_stream_and_wait_event():
    producer, consumer = loom.Stream("sim"), loom.Stream("sim")
    host = loom.arange(3.0).pin_memory("sim")
    with loom.stream(producer):
        dev = host.to("sim", non_blocking=True)
    assert not producer.query()
    consumer.wait_stream(producer)
    assert producer.query()
    with loom.stream(producer):
        more = host.to("sim", non_blocking=True)
        marker = loom.Event()
        marker.record(producer)
    assert not marker.query()
    consumer.wait_event(marker)
    assert marker.query()
    with loom.stream(consumer):
        assert (dev + more).cpu().tolist() == [0.0, 2.0, 4.0]


def test_dataloader_pins_batches():
    data = TensorDataset(loom.arange(8.0).reshape(4, 2), loom.arange(4))
    batches = list(DataLoader(data, batch_size=2, pin_memory=True, pin_memory_device="sim"))
    assert all(t.is_pinned() for batch in batches for t in batch)
    assert batches[1][0].tolist() == [[4.0, 5.0], [6.0, 7.0]]
    plain = list(DataLoader(data, batch_size=2))
    assert not any(t.is_pinned() for batch in plain for t in batch)


def test_dataloader_pin_memory_without_a_device_warns_and_goes_on():
    if loom.cuda.is_available():
        pytest.skip("a CUDA device is present")
    data = TensorDataset(loom.arange(4.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = DataLoader(data, batch_size=2, pin_memory=True)
    assert any("pin_memory" in str(w.message) for w in caught)
    assert [b[0].tolist() for b in loader] == [[0.0, 1.0], [2.0, 3.0]]
