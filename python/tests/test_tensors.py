"""The array protocols the binding reads: __array_interface__ (numpy), DLPack capsules and
__cuda_array_interface__, each giving the same address, shape, strides and element type; and
the reference run through DLPack-only objects gives what it gives through numpy."""
import numpy as np
import pytest

import mla_decode as mla
from mla_decode._tensors import as_array
from oracle import DeviceView, DLPackOnly, check_outputs, expected, make_problem


@pytest.mark.parametrize("wrap", [lambda a: a, DLPackOnly, DeviceView],
                         ids=["array_interface", "dlpack", "cuda_array_interface"])
@pytest.mark.parametrize("dtype,name", [(np.uint8, "uint8"), (np.uint16, "uint16"),
                                        (np.int32, "int32"), (np.float32, "float32")])
def test_protocols_agree(wrap, dtype, name):
    base = np.arange(4 * 6 * 10).astype(dtype).reshape(4, 6, 10)
    view = base[1:, ::2, 3:9]  # offset, strided
    a = as_array(wrap(view), "x")
    assert a.ptr == view.__array_interface__["data"][0]
    assert a.shape == (3, 3, 6) and a.strides == (60, 20, 1) and a.dtype == name
    assert a.on_device == (wrap is DeviceView)
    c = as_array(wrap(np.zeros((2, 3), dtype)), "x")
    assert c.strides == (3, 1)


def test_dlpack_keeps_its_capsule():
    arr = np.arange(12, dtype=np.int32)
    a = as_array(DLPackOnly(arr), "x")
    assert a.owner[1].__class__.__name__ == "PyCapsule"


def test_reference_through_dlpack():
    kw, dec = make_problem(np.random.default_rng(21), "mxfp4_fp8v", [1, 2], [13, 40],
                           page_size=16)
    wrapped = {k: DLPackOnly(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    mla.reference(mla.Params(**wrapped))
    check_outputs(kw["o"], kw["lse"], *expected(dec))


def test_unsupported_objects():
    with pytest.raises(TypeError, match="kv_cache: expected"):
        as_array(object(), "kv_cache")


def test_reference_on_torch_cpu_tensors():
    """torch CPU tensors serve the reference too: bf16 from torch.bfloat16, O float32."""
    torch = pytest.importorskip("torch")
    kw, dec = make_problem(np.random.default_rng(22), "bf16", [2, 1], [30, 9], page_size=16)
    tensors = {k: (torch.from_numpy(v.view(np.int16)).view(torch.bfloat16)
                   if v.dtype == np.uint16 else torch.from_numpy(v))
               if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    p = mla.Params(**tensors)  # the tensors share the numpy arrays' memory
    assert p.on_device is False and p.struct.q_dtype == mla.DType.BF16
    assert mla.dtype(torch.bfloat16) == mla.DType.BF16 and mla.dtype("torch.float32") == 2
    mla.reference(p)
    check_outputs(kw["o"], kw["lse"], *expected(dec))
