"""numpy and DLPack interop: zero copy both ways, lifetimes, capsule protocol, errors."""
import ctypes
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import loom

try:
    import torch
except ImportError:  # torch is only a peer for these tests
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the DLPack peer) is not installed")

NUMPY_DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]
LOOM_DTYPES = [loom.bool, loom.uint8, loom.int8, loom.int16, loom.int32, loom.int64, loom.float16, loom.bfloat16,
               loom.float32, loom.float64]


def sample(dtype, shape=(2, 3)):
    return (np.arange(np.prod(shape)) % 2 if dtype is np.bool_ else np.arange(np.prod(shape))).astype(dtype).reshape(shape)


def dead_after(make):
    """make() returns (ref to the owner, things keeping it alive); True when the owner dies once they go."""
    ref, keep = make()
    gc.collect()
    alive_while_kept = ref() is not None
    del keep
    gc.collect()
    return alive_while_kept and ref() is None


# --- DLPack structs, for looking inside capsules -----------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


VersionedDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                                     ("manager_ctx", ctypes.c_void_p), ("deleter", VersionedDeleter),
                                     ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

api = ctypes.pythonapi
api.PyCapsule_GetName.restype = ctypes.c_char_p
api.PyCapsule_GetName.argtypes = [ctypes.py_object]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def capsule_name(capsule):
    return api.PyCapsule_GetName(capsule).decode()


# --- Tensor.numpy() and __array__ --------------------------------------------

def test_numpy_shares_memory_both_ways():
    t = loom.zeros(2, 3)
    a = t.numpy()
    a[1, 2] = 7
    assert t.tolist() == [[0, 0, 0], [0, 0, 7]]
    t.add_(loom.ones(2, 3))
    assert a.tolist() == [[1, 1, 1], [1, 1, 8]]
    assert a.flags.writeable and a.dtype == np.float32


@pytest.mark.parametrize("dtype", [d for d in LOOM_DTYPES if d is not loom.bfloat16], ids=repr)
def test_numpy_has_every_dtype(dtype):
    t = loom.arange(6).reshape(2, 3).to(dtype)
    a = t.numpy()
    assert a.dtype == np.dtype(repr(dtype)[len("loom."):])
    assert a.tolist() == t.tolist()


def test_numpy_views_keep_strides_and_offset():
    base = loom.arange(24).reshape(2, 3, 4)
    for view in [base.transpose(0, 2), base.select(0, 1), base.narrow(1, 1, 2).narrow(2, 1, 2), base.narrow(2, 1, 2),
                 loom.arange(3).expand(4, 3)]:
        a = view.numpy()
        assert a.tolist() == view.tolist()
        assert a.strides == tuple(s * 8 for s in view.stride())
    a = base.select(0, 1).select(0, 2).numpy()
    a[0] = -5
    assert base.tolist()[1][2][0] == -5


def test_numpy_array_keeps_the_memory_alive():
    t = loom.arange(5).float()
    a = t.numpy()
    del t
    gc.collect()
    loom.full((5,), 99.0)  # would likely reuse freed memory
    assert a.tolist() == [0, 1, 2, 3, 4]


def test_numpy_of_0d_and_empty_tensors():
    assert loom.tensor(3.5).numpy().shape == ()
    assert loom.tensor(3.5).numpy() == 3.5
    assert loom.zeros(0, 3).numpy().shape == (0, 3)


def test_numpy_errors_like_pytorch():
    with pytest.raises(RuntimeError, match="requires grad.*detach"):
        loom.ones(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="BFloat16"):
        loom.ones(2, dtype=loom.bfloat16).numpy()
    with pytest.raises(TypeError, match="can't convert sim:0 device type tensor to numpy"):
        loom.ones(2, device="sim").numpy()


def test_numpy_force_detaches_and_copies_to_cpu():
    x = loom.ones(2, requires_grad=True)
    assert x.numpy(force=True).tolist() == [1, 1]
    assert loom.ones(2, device="sim").numpy(force=True).tolist() == [1, 1]


def test_array_protocol():
    t = loom.arange(4).reshape(2, 2)
    a = np.asarray(t)
    assert a.dtype == np.int64 and np.shares_memory(a, t.numpy())
    assert np.asarray(t, dtype=np.float32).dtype == np.float32
    assert np.add(t, 1).tolist() == [[1, 2], [3, 4]]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(loom.ones(2, requires_grad=True))


# --- loom.from_numpy -----------------------------------------------------------

def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((2, 3), dtype=np.float32)
    t = loom.from_numpy(a)
    a[0, 1] = 4
    assert t.tolist() == [[0, 4, 0], [0, 0, 0]]
    t.mul_(loom.tensor(2.0)).add_(loom.ones(2, 3))
    assert a.tolist() == [[1, 9, 1], [1, 1, 1]]


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: d.__name__)
def test_from_numpy_has_every_dtype(dtype):
    a = sample(dtype)
    t = loom.from_numpy(a)
    assert repr(t.dtype) == "loom." + np.dtype(dtype).name
    assert t.tolist() == a.tolist()
    assert np.shares_memory(t.numpy(), a)


def test_from_numpy_non_contiguous():
    a = np.arange(60.0).reshape(3, 4, 5)
    for view in [a.T, a[:, ::2, 1:4], a[1], np.asfortranarray(a), a[..., 3]]:
        t = loom.from_numpy(view)
        assert t.tolist() == view.tolist()
        assert t.stride() == tuple(s // 8 for s in view.strides)
    with pytest.warns(UserWarning, match="not writable"):  # broadcast_to gives a read-only view
        t = loom.from_numpy(np.broadcast_to(a[0, 0], (2, 5)))
    assert t.stride() == (0, 1) and t.tolist() == [[0, 1, 2, 3, 4]] * 2


@settings(max_examples=60, deadline=None, database=None)  # no .hypothesis/ in the tree
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4),
       steps=st.lists(st.integers(1, 3), min_size=4, max_size=4),
       transpose=st.booleans())
def test_from_numpy_round_trips_any_strided_view(shape, steps, transpose):
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    view = a[tuple(slice(None, None, s) for s in steps[:len(shape)]) + (...,)]
    if transpose:
        view = view.T
    t = loom.from_numpy(view)
    assert t.shape == view.shape and t.tolist() == view.tolist()
    back = t.numpy()
    assert back.tolist() == view.tolist()
    if view.size:
        assert np.shares_memory(back, a)


def test_from_numpy_keeps_the_array_alive():
    def make():
        a = np.arange(4.0)
        t = loom.from_numpy(a)
        return weakref.ref(a), t
    assert dead_after(make)


def test_from_numpy_negative_strides_raise_like_pytorch():
    with pytest.raises(ValueError, match="negative"):
        loom.from_numpy(np.arange(4.0)[::-1])
    # A stride that is never used does not count.
    assert loom.from_numpy(np.ones((2, 1))[:, ::-1]).tolist() == [[1], [1]]


def test_from_numpy_read_only_array_warns_and_shares():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = loom.from_numpy(a)
    assert np.shares_memory(t.numpy(), a)


def test_from_numpy_errors():
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        loom.from_numpy([1, 2])
    for dtype in [np.complex64, np.uint16, object]:
        with pytest.raises(TypeError, match="has no loom equivalent"):
            loom.from_numpy(np.zeros(2, dtype=dtype))
    with pytest.raises(ValueError, match="byte order"):
        loom.from_numpy(np.zeros(2, dtype=">f4"))
    odd = np.zeros(9, dtype=np.uint8)[1:].view(np.int64)[:0]  # an empty view is fine anywhere
    assert loom.from_numpy(odd).shape == (0,)
    with pytest.raises(ValueError, match="not aligned"):
        loom.from_numpy(np.zeros(9, dtype=np.uint8)[1:].view(np.int64))
    packed = np.zeros(3, dtype=[("a", np.int8), ("b", np.float32)])["b"]  # stride 5, itemsize 4
    with pytest.raises(ValueError, match="not a multiple of the element byte size"):
        loom.from_numpy(packed)


# --- DLPack --------------------------------------------------------------------

def test_dlpack_device():
    assert loom.ones(2).__dlpack_device__() == (1, 0)  # (kDLCPU, 0)
    with pytest.raises(BufferError, match="sim"):
        loom.ones(2, device="sim").__dlpack_device__()
    with pytest.raises(BufferError, match="sim"):
        loom.ones(2, device="sim").__dlpack__()


def test_dlpack_with_numpy_is_zero_copy_both_ways():
    t = loom.zeros(2, 3, dtype=loom.float64)
    a = np.from_dlpack(t)  # read-only: numpy 1.x marks every DLPack import so
    t.fill_(3)
    assert a.tolist() == [[3, 3, 3], [3, 3, 3]]
    b = np.arange(6.0).reshape(2, 3)[:, ::2]
    u = loom.from_dlpack(b)
    u.add_(loom.ones(2, 2, dtype=loom.float64))
    assert b.tolist() == [[1, 3], [4, 6]]


@needs_torch
@pytest.mark.parametrize("dtype", [d for d in LOOM_DTYPES if d is not loom.bool], ids=repr)
def test_dlpack_with_torch_is_zero_copy_both_ways(dtype):
    # torch 1.13 knows no kDLBool; bool is tested loom to loom below.
    name = repr(dtype)[len("loom."):]
    t = loom.arange(6).reshape(2, 3).to(dtype).T
    x = torch.from_dlpack(t)
    assert x.dtype == getattr(torch, name) and x.tolist() == t.tolist()
    x[0, 1] = 9
    assert t.tolist()[0][1] == 9
    y = torch.arange(6).reshape(2, 3).to(getattr(torch, name))[:, 1:]
    u = loom.from_dlpack(y)
    assert u.dtype is dtype and u.tolist() == y.tolist()
    u.fill_(5)
    assert (y == 5).all()


@needs_torch
def test_dlpack_views_with_offset_reach_torch():
    base = loom.arange(12.0).reshape(3, 4)
    x = torch.from_dlpack(base.narrow(0, 1, 2).narrow(1, 2, 2))  # torch 1.13 ignores byte_offset: data must point at the first element
    assert x.tolist() == [[6, 7], [10, 11]]


def test_dlpack_loom_to_loom_every_dtype():
    for dtype in LOOM_DTYPES:
        t = loom.arange(6).reshape(3, 2).to(dtype)
        for capsule in [t.__dlpack__(), t.__dlpack__(max_version=(1, 0))]:
            u = loom.from_dlpack(capsule)
            assert u.dtype is dtype and u.tolist() == t.tolist()
        u = loom.from_dlpack(t)
        u.fill_(0)
        assert not t.to(loom.bool).any().item()


@needs_torch
def test_from_dlpack_takes_a_raw_capsule_and_consumes_it():
    x = torch.arange(3.0)
    capsule = torch.utils.dlpack.to_dlpack(x)
    t = loom.from_dlpack(capsule)
    assert capsule_name(capsule) == "used_dltensor"
    t.add_(loom.ones(3))
    assert x.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="already consumed"):
        loom.from_dlpack(capsule)


def test_consumers_rename_loom_capsules():
    t = loom.ones(2)
    old, new = t.__dlpack__(), t.__dlpack__(max_version=(1, 0))
    assert capsule_name(old) == "dltensor" and capsule_name(new) == "dltensor_versioned"
    loom.from_dlpack(old), loom.from_dlpack(new)
    assert capsule_name(old) == "used_dltensor" and capsule_name(new) == "used_dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"


def test_versioned_capsule_contents():
    base = loom.arange(6, dtype=loom.bfloat16).reshape(2, 3)
    t = base.narrow(1, 1, 2)
    capsule = t.__dlpack__(max_version=(1, 2))
    m = DLManagedTensorVersioned.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor_versioned"))
    d = m.dl_tensor
    assert (m.major, m.minor, m.flags) == (1, 0, 0)
    assert (d.device.device_type, d.device.device_id, d.ndim) == (1, 0, 2)
    assert (d.dtype.code, d.dtype.bits, d.dtype.lanes) == (4, 16, 1)  # kDLBfloat
    assert [d.shape[i] for i in range(2)] == [2, 2] and [d.strides[i] for i in range(2)] == [3, 1]
    # data points at the first element (byte_offset 0), as torch 1.13 needs.
    base_capsule = base.__dlpack__(max_version=(1, 0))  # owns the struct read below
    base_m = DLManagedTensorVersioned.from_address(api.PyCapsule_GetPointer(base_capsule, b"dltensor_versioned"))
    assert d.byte_offset == 0 and d.data == base_m.dl_tensor.data + 2
    copied = t.__dlpack__(max_version=(1, 0), copy=True)
    assert DLManagedTensorVersioned.from_address(api.PyCapsule_GetPointer(copied, b"dltensor_versioned")).flags == 2
    other = loom.from_dlpack(copied)
    other.fill_(0)
    assert t.to(loom.float32).tolist() == [[1, 2], [4, 5]]


def test_unconsumed_capsules_free_what_they_hold():
    def make(**kw):
        def inner():
            a = np.arange(4.0)
            return weakref.ref(a), loom.from_numpy(a).__dlpack__(**kw)
        return inner
    assert dead_after(make())
    assert dead_after(make(max_version=(1, 0)))


def test_imported_tensors_release_the_producer():
    def make():
        a = np.arange(4.0)
        return weakref.ref(a), loom.from_dlpack(a)
    assert dead_after(make)


def test_failed_import_leaves_the_capsule_to_free_itself():
    def make():
        a = np.arange(4.0)
        capsule = a[::-1].__dlpack__()
        with pytest.raises(ValueError, match="negative"):
            loom.from_dlpack(capsule)
        assert capsule_name(capsule) == "dltensor"
        return weakref.ref(a), capsule
    assert dead_after(make)


def test_read_only_versioned_import_warns_and_calls_the_deleter():
    data = np.arange(3.0)
    shape = (ctypes.c_int64 * 1)(2)
    deleted = []
    deleter = VersionedDeleter(lambda m: deleted.append(True))
    m = DLManagedTensorVersioned(1, 0, None, deleter, 1, DLTensor(
        data.ctypes.data, DLDevice(1, 0), 1, DLDataType(2, 64, 1), shape, None, 8))
    capsule = api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)
    with pytest.warns(UserWarning, match="read-only"):
        t = loom.from_dlpack(capsule)
    assert t.tolist() == [1.0, 2.0] and t.stride() == (1,)  # NULL strides: row-major; byte_offset skips one
    assert capsule_name(capsule) == "used_dltensor_versioned"
    del t
    gc.collect()
    assert deleted == [True]


def test_newer_major_version_is_refused():
    data = np.arange(3.0)
    shape = (ctypes.c_int64 * 1)(3)
    m = DLManagedTensorVersioned(2, 0, None, VersionedDeleter(lambda m: None), 0, DLTensor(
        data.ctypes.data, DLDevice(1, 0), 1, DLDataType(2, 64, 1), shape, None, 0))
    capsule = api.PyCapsule_New(ctypes.addressof(m), b"dltensor_versioned", None)
    with pytest.raises(BufferError, match="DLPack 2.0"):
        loom.from_dlpack(capsule)


def test_dlpack_errors():
    t = loom.ones(2)
    with pytest.raises(RuntimeError, match="require gradient"):
        loom.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(ValueError, match="stream must be None"):
        t.__dlpack__(stream=1)
    with pytest.raises(TypeError, match="max_version must be a tuple of two ints, not str"):
        t.__dlpack__(max_version="1.0")
    with pytest.raises(BufferError, match="cannot move"):
        t.__dlpack__(dl_device=(2, 0))
    assert capsule_name(t.__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(TypeError, match="__dlpack__ or a DLPack capsule, got list"):
        loom.from_dlpack([1, 2])
    other = api.PyCapsule_New(ctypes.addressof(ctypes.c_int(0)), b"something", None)
    with pytest.raises(TypeError, match="capsule named 'something'"):
        loom.from_dlpack(other)
