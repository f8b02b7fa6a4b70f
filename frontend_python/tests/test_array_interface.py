"""numpy conversion goes through numpy's Python-level __array_interface__, never its C structs (numpy 2
moved PyArray_Descr's fields, so reading them broke every conversion): fakes that expose only the
interface convert like arrays, zero copy both ways, and the built module carries no numpy C-API use."""
import pathlib
import sys

import numpy as np
import pytest

import loom


class Fake:
    """An object that is an array only through __array_interface__ (as numpy 1.x and 2.x both write it)."""

    def __init__(self, owner, typestr=None, shape=None, strides=None, readonly=False, version=3):
        self.owner = owner  # keeps the memory alive
        iface = owner.__array_interface__
        self.__array_interface__ = {
            "version": version, "typestr": typestr or iface["typestr"], "shape": shape or iface["shape"],
            "strides": strides, "data": (iface["data"][0], readonly), "descr": iface["descr"]}


LAYOUTS = [("<f4", np.float32, loom.float32), ("<f8", np.float64, loom.float64), ("<f2", np.float16, loom.float16),
           ("|b1", np.bool_, loom.bool), ("|u1", np.uint8, loom.uint8), ("|i1", np.int8, loom.int8),
           ("<i2", np.int16, loom.int16), ("<i4", np.int32, loom.int32), ("<i8", np.int64, loom.int64)]


@pytest.mark.parametrize("typestr,np_dtype,loom_dtype", LAYOUTS)
def test_fake_array_converts_by_copy_and_by_view(typestr, np_dtype, loom_dtype):
    base = (np.arange(6) % 2 if np_dtype is np.bool_ else np.arange(6)).astype(np_dtype).reshape(2, 3)
    fake = Fake(base, typestr=typestr)
    copied = loom.tensor(fake)
    viewed = loom.from_numpy(fake)
    assert copied.dtype is loom_dtype and viewed.dtype is loom_dtype
    assert copied.tolist() == base.tolist() == viewed.tolist()
    base[0, 0] = 1
    assert viewed[0, 0].item() == 1 and copied[0, 0].item() == 0  # the view shares, the copy does not


def test_fake_strided_interface_is_read_with_its_strides():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    fake = Fake(base, shape=(4, 3), strides=(4, 16))  # the transpose, described by strides only
    assert loom.from_numpy(fake).tolist() == base.T.tolist()
    assert loom.tensor(fake).tolist() == base.T.tolist()


def test_unsupported_dtype_is_named():
    with pytest.raises(TypeError, match="numpy dtype complex64 has no loom equivalent"):
        loom.tensor(np.zeros(2, np.complex64))
    with pytest.raises(TypeError, match="uint16"):
        loom.from_numpy(np.zeros(2, np.uint16))
    with pytest.raises(TypeError, match="datetime64"):
        loom.tensor(np.zeros(2, "datetime64[ns]"))
    fake = Fake(np.zeros(2, np.float32), typestr="<c8")
    with pytest.raises(TypeError, match="<c8"):
        loom.tensor(fake)


def test_malformed_interfaces_are_refused_with_the_field():
    with pytest.raises(TypeError, match="version 3"):
        loom.tensor(Fake(np.zeros(2, np.float32), version=2))
    fake = Fake(np.zeros(2, np.float32))
    fake.__array_interface__["typestr"] = "<"
    with pytest.raises(TypeError, match="malformed typestr"):
        loom.tensor(fake)
    fake.__array_interface__["typestr"] = "<fx"
    with pytest.raises(TypeError, match="numpy dtype <fx has no loom equivalent"):
        loom.tensor(fake)
    del fake.__array_interface__["data"]
    with pytest.raises(TypeError, match="'data'"):
        loom.from_numpy(fake)
    with pytest.raises(TypeError, match="expected np.ndarray \\(got list\\)"):
        loom.from_numpy([1, 2])


def test_readonly_interface_warns_on_view_only():
    base = np.arange(3, dtype=np.float32)
    with pytest.warns(UserWarning, match="not writable"):
        loom.from_numpy(Fake(base, readonly=True))
    assert loom.tensor(Fake(base, readonly=True)).tolist() == [0, 1, 2]


def test_byte_swapped_and_negative_strides_copy_correctly():
    big = np.arange(5, dtype=">f4")
    assert loom.tensor(big).tolist() == [0, 1, 2, 3, 4]
    assert loom.tensor(np.arange(5.0)[::-1]).tolist() == [4, 3, 2, 1, 0]
    with pytest.raises(ValueError, match="byte order"):
        loom.from_numpy(big)


def test_numpy_scalars_keep_their_dtype():
    # As torch.tensor: a numpy scalar's dtype, alone or in a list (promoted with the other leaves).
    assert loom.tensor(np.float64(1.5)).dtype is loom.float64
    assert loom.tensor([np.float16(1), np.float16(2)]).dtype is loom.float16
    assert loom.tensor([np.uint8(1), 2]).dtype is loom.int64
    assert loom.tensor([np.int32(1), 2.5]).dtype is loom.float32
    assert loom.tensor(np.float32(2.5)).item() == 2.5
    assert loom.tensor(np.int32(7)).dtype is loom.int32
    assert loom.tensor(np.bool_(True)).item() is True


def test_tensor_numpy_is_a_zero_copy_view_that_outlives_the_tensor():
    t = loom.arange(6, dtype=loom.float32).view(2, 3)
    a = t.numpy()
    assert a.dtype == np.float32 and a.shape == (2, 3) and a.flags.writeable
    a[1, 2] = 42
    assert t[1, 2].item() == 42
    tt = t.t()
    assert np.array_equal(tt.numpy(), a.T) and tt.numpy().strides == a.T.strides
    del t, tt
    assert a[1, 2] == 42  # the array's base holds the storage
    assert type(a.base).__name__ == "_ArrayExport"
    assert loom.zeros(0, 3).numpy().shape == (0, 3)
    with pytest.raises(TypeError, match="bfloat16"):
        loom.ones(2, dtype=loom.bfloat16).numpy()


def test_array_protocol_takes_numpy_2_copy_keyword():
    t = loom.arange(3, dtype=loom.float32)
    assert np.asarray(t).base is not None
    same = t.__array__(copy=None)
    same[0] = 9
    assert t[0].item() == 9
    c = t.__array__(copy=True)
    c[0] = -1
    assert t[0].item() == 9
    assert t.__array__(np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="avoid copy"):
        t.__array__(np.float64, copy=False)


def test_indexing_with_numpy_arrays_and_scalars():
    x = loom.arange(10)
    assert x[np.array([1, 3])].tolist() == [1, 3]
    assert x[np.int64(4)].item() == 4
    assert x[np.array([True, False] * 5)].tolist() == [0, 2, 4, 6, 8]
    with pytest.raises(IndexError):
        x[np.float64(1.0)]


def test_module_does_not_use_numpy_c_api():
    # pybind11's numpy.h looks numpy's C-API table up by the name _ARRAY_API: a build that uses it
    # would read numpy 1.x's struct layout under numpy 2.
    so = next(pathlib.Path(loom._C.__file__).parent.glob("_C*.so"))
    assert b"_ARRAY_API" not in so.read_bytes()
