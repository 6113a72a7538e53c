"""Tensors through DLPack: NumPy arrays run on the simulator without a
copy; low-precision dtypes travel as integers of their width; refusals name
the tensor and what would be accepted."""

import ml_dtypes
import numpy as np
import pytest

import warpforge
from warpforge import _frameworks, _warpforge


def test_a_numpy_array_is_mapped_not_copied():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = _frameworks.to_tensor(x, "x")
    assert t.device == warpforge.Device.sim()
    assert (t.dtype, t.shape, t.strides) == ("f32", [3, 4], [4, 1])
    # The mapped address keeps the host array's alignment within 256 bytes.
    assert t.address % 256 == x.ctypes.data % 256


def test_strided_views_keep_their_strides():
    x = np.zeros((4, 6), dtype=np.float32)[:, ::2]
    t = _frameworks.to_tensor(x, "x")
    assert (t.shape, t.strides) == ([4, 3], [6, 2])


@pytest.mark.parametrize("dtype,name", [
    (ml_dtypes.float8_e4m3fn, "e4m3"), (ml_dtypes.float8_e5m2, "e5m2"), (ml_dtypes.float8_e8m0fnu, "e8m0"),
    (ml_dtypes.bfloat16, "bf16"), (np.uint8, "u8"), (np.int8, "i8"), (np.float16, "f16")])
def test_ml_dtypes_arrive_as_their_warpforge_dtype(dtype, name):
    t = _frameworks.to_tensor(np.zeros((2, 8), dtype=dtype), "x")
    assert t.dtype == name


def test_unpacked_fp4_is_refused_naming_the_packed_form():
    with pytest.raises(warpforge.RuntimeError, match="packed two per byte"):
        _frameworks.to_tensor(np.zeros(4, dtype=ml_dtypes.float4_e2m1fn), "a")


def test_a_non_tensor_is_refused_naming_its_type():
    with pytest.raises(warpforge.RuntimeError, match="builtins.list is not a tensor"):
        _frameworks.to_tensor([1.0, 2.0], "a")


def test_a_reinterpretation_of_another_width_is_refused():
    capsule = np.zeros(4, dtype=np.float32).__dlpack__()
    with pytest.raises(warpforge.RuntimeError, match=r"x: f32\[4\] strides \[1\] cannot be read as e4m3"):
        _warpforge.from_dlpack(capsule, "e4m3", "x")


def test_a_consumed_capsule_is_refused():
    capsule = np.zeros(4, dtype=np.float32).__dlpack__()
    _warpforge.from_dlpack(capsule, None, "x")
    with pytest.raises(warpforge.RuntimeError, match="x: not a DLPack capsule"):
        _warpforge.from_dlpack(capsule, None, "x")


def test_kernels_write_into_the_numpy_array():
    a = np.full((16, 16), 0.5, dtype=ml_dtypes.bfloat16)
    b = np.eye(16, dtype=ml_dtypes.bfloat16)
    d = np.full((16, 16), np.nan, dtype=np.float32)  # poisoned
    op = warpforge.Gemm(a, b, d)
    op.execute(a, b, d)
    np.testing.assert_array_equal(d, np.full((16, 16), 0.5, dtype=np.float32))
