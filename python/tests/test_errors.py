"""Bad inputs: each library status raised as MlaError (status, its name, the library's message)
with the outputs untouched; what the binding refuses itself (MlaError too, with the status the
library gives such input, and ValueError / TypeError); and, without a GPU, NO_DEVICE from every
GPU entry point."""
import ctypes

import numpy as np
import pytest

import mla_decode as mla
from oracle import DeviceView, make_problem


def problem(fmt="bf16", **make):
    kw, _ = make_problem(np.random.default_rng(11), fmt, [1, 2], [7, 30], **make)
    return kw


def refuse(status, call, words, kw=None):
    """call() raises MlaError with `status` and a message holding `words`; O and LSE (NaN
    sentinels of kw) untouched."""
    with pytest.raises(mla.MlaError) as info:
        call()
    e = info.value
    assert e.status == status and e.status_name == "MLA_STATUS_" + status.name
    assert words in e.message and e.status_name in str(e) and e.function.startswith("mla_")
    if kw is not None:
        assert np.all(np.isnan(kw["o"])) and np.all(np.isnan(kw["lse"])), "outputs written"
    return e


def reference_refuses(status, words, fmt="bf16", struct_edit=None, **changes):
    kw = problem(fmt)
    kw.update(changes)
    p = mla.Params(**kw)
    if struct_edit:
        struct_edit(p.struct)
    refuse(status, lambda: mla.reference(p), words, kw)


S = mla.Status


def test_unsupported_heads():
    kw = problem()
    q = np.zeros((3, 12, 576), np.uint16)
    o = np.full((3, 12, 512), np.nan, np.float32)
    lse = np.full((3, 12), np.nan, np.float32)
    p = mla.Params(**dict(kw, q=q, o=o, lse=lse))
    refuse(S.UNSUPPORTED, lambda: mla.reference(p), "num_heads 12", dict(o=o, lse=lse))


@pytest.mark.parametrize("value", [0.0, -1.0, float("nan"), float("inf")])
def test_sm_scale(value):
    reference_refuses(S.INVALID_VALUE, "sm_scale", sm_scale=value)


def test_dtype_not_for_q():
    kw = problem()
    kw["q"] = np.zeros((3, 16, 576), np.uint8)
    reference_refuses(S.INVALID_DTYPE, "q_dtype", q=kw["q"], q_dtype="mxfp4")


def test_dtype_not_an_mla_dtype():
    reference_refuses(S.INVALID_DTYPE, "kv_dtype", struct_edit=lambda s: setattr(s, "kv_dtype",
                                                                                 42))


def test_missing_indptr():
    reference_refuses(S.NULL_POINTER, "qo_indptr", qo_indptr=None, batch_size=2, max_q_len=2)


def test_mxfp4_without_scales():
    reference_refuses(S.NULL_POINTER, "kv_block_scales", fmt="mxfp4", kv_block_scales=None)


def test_misaligned_q():
    kw = problem()
    raw = np.zeros(kw["q"].size + 8, np.uint16)
    q = raw[1:1 + kw["q"].size].reshape(kw["q"].shape)  # 2 bytes off a 16-byte boundary
    q[...] = kw["q"]
    reference_refuses(S.MISALIGNED, "q", q=q)


def test_stride_too_small():
    reference_refuses(S.INVALID_SIZE, "q_stride_head",
                      struct_edit=lambda s: setattr(s, "q_stride_head", 100))


def test_max_q_len_above_total_q():
    reference_refuses(S.INVALID_SIZE, "max_q_len", max_q_len=10)


def test_q_len_above_max_q_len():
    # total_q (4) within batch_size * max_q_len (2 * 2), one element's 3 tokens past max_q_len:
    # only the reference, which reads qo_indptr, sees it.
    kw, _ = make_problem(np.random.default_rng(11), "bf16", [3, 1], [7, 30])
    kw.update(max_q_len=2)
    refuse(S.INVALID_VALUE, lambda: mla.reference(mla.Params(**kw)), "max_q_len", kw)


def test_total_q_above_batch_size_times_max_q_len():
    reference_refuses(S.INVALID_SIZE, "exceeds batch_size", max_q_len=1)


def test_decreasing_kv_indptr():
    kw = problem()
    kv = kw["kv_indptr"].copy()
    kv[1] = 38
    reference_refuses(S.INVALID_VALUE, "non-decreasing", kv_indptr=kv, max_kv_len=30)


def test_page_id_out_of_range():
    kw = problem(page_size=16)
    ids = kw["kv_page_indices"].copy()
    ids[0] = 1000
    reference_refuses(S.INVALID_VALUE, "page", kv_page_indptr=kw["kv_page_indptr"],
                      kv_page_indices=ids, page_size=16, kv_cache=kw["kv_cache"])


def test_scale_for_bf16_cache():
    reference_refuses(S.INVALID_VALUE, "kv_scale", kv_scale=2.0)


def test_v_cache_without_mxfp4_keys():
    kw = problem()
    reference_refuses(S.INVALID_VALUE, "v_cache", v_cache=np.zeros((40, 512), np.uint8),
                      v_dtype="fp8_e4m3fn", num_slots=40)
    assert kw  # the sentinels of reference_refuses' own problem were checked


def test_reserved_not_zero():
    reference_refuses(S.INVALID_VALUE, "reserved",
                      struct_edit=lambda s: s.reserved.__setitem__(0, 1))


# ---- what the binding refuses before calling the library -----------------------------------

def binding_refuses(kind, status, words, call):
    """call() raises, before any library call, an MlaError that is also `kind` (ValueError or
    TypeError), with `status` and a message holding `words`."""
    with pytest.raises(mla.MlaError) as info:
        call()
    e = info.value
    assert isinstance(e, kind), type(e)
    assert e.status == status and e.status_name == "MLA_STATUS_" + status.name
    assert words in e.message and e.function == "python binding"
    assert str(e) == "python binding: %s: %s" % (e.status_name, e.message)


def test_binding_refusals():
    kw = problem()
    device = {k: DeviceView(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    cases = [
        (ValueError, S.INVALID_VALUE, "GPU entry points need device",
         lambda: mla.fwd(mla.Params(**kw))),
        (ValueError, S.INVALID_VALUE, "reference needs host",
         lambda: mla.reference(mla.Params(**device, max_q_len=2, max_kv_len=30))),
        (ValueError, S.INVALID_VALUE, "both host and device",
         lambda: mla.Params(**dict(kw, q=device["q"]))),
        (TypeError, S.INVALID_DTYPE, "give q_dtype",
         lambda: mla.Params(**dict(kw, q=kw["q"].view(np.uint8)[:, :, :576]))),
        (TypeError, S.INVALID_DTYPE, "int32",
         lambda: mla.Params(**dict(kw, kv_indptr=kw["kv_indptr"].astype(np.int64)))),
        (ValueError, S.INVALID_SIZE, "kv_cache must be",
         lambda: mla.Params(**dict(kw, kv_cache=kw["kv_cache"][:, :500]))),
        (ValueError, S.INVALID_SIZE, "kv_indptr must be",
         lambda: mla.Params(**dict(kw, kv_indptr=kw["kv_indptr"][:2]))),
        (ValueError, S.INVALID_VALUE, "max_kv_len must be given",
         lambda: mla.Params(**device, max_q_len=2)),
        (TypeError, S.INVALID_DTYPE, "needs 1-byte storage",
         lambda: mla.Params(**dict(kw, kv_dtype="fp8_e4m3fn"))),
        (ValueError, S.INVALID_DTYPE, "no mla_dtype", lambda: mla.dtype("fp16")),
        (TypeError, S.INVALID_VALUE, "expected a torch tensor",
         lambda: mla.Params(**dict(kw, q=[1, 2, 3]))),
        (ValueError, S.INVALID_SIZE, "o must be (tokens, heads, 512)",
         lambda: mla.Params(**dict(kw, o=kw["o"][:, :, :500]))),
        (ValueError, S.INVALID_SIZE, "o must be (tokens, heads, 512)",
         lambda: mla.Params(**dict(kw, o=np.full((3, 16, 576), np.nan, np.float32)))),
        (ValueError, S.INVALID_SIZE, "q must be (tokens, heads, 576)",
         lambda: mla.Params(**dict(kw, q=np.zeros((3, 16, 640), np.uint16)))),
        (TypeError, S.INVALID_DTYPE, "lse must hold float32",
         lambda: mla.Params(**dict(kw, lse=kw["lse"].astype(np.float64)))),
    ]
    for kind, status, words, call in cases:
        binding_refuses(kind, status, words, call)


def test_errors_leave_no_stale_message():
    """A call that succeeds after one that failed raises nothing (the message is per call)."""
    kw = problem()
    with pytest.raises(mla.MlaError):
        mla.reference(mla.Params(**dict(kw, sm_scale=0.0)))
    mla.reference(mla.Params(**kw))
    assert mla.load_library().mla_last_error_message() == b""


# ---- GPU entry points: argument checks come first, then NO_DEVICE without a GPU -------------

def device_problem(**changes):
    kw = problem(o_dtype=np.uint16)
    kw.update(changes)
    return mla.Params(**{k: DeviceView(v) if isinstance(v, np.ndarray) else v
                         for k, v in kw.items()}, max_q_len=2, max_kv_len=30)


def shape_only(**changes):
    """Params of a shape and no arrays (what workspace_size and Plan read)."""
    return mla.Params(**dict(dict(sm_scale=1 / 24, batch_size=2, total_q=3, num_heads=16,
                                  num_slots=40, max_q_len=2, max_kv_len=30,
                                  kv_dtype="fp8_e4m3fn", kv_scale=0.5), **changes))


def test_gpu_entry_points_check_arguments_first():
    p = device_problem(sm_scale=-1.0)
    ws = DeviceView(np.zeros(1 << 16, np.uint8))
    for fn, call in [("mla_decode_workspace_size", lambda: mla.workspace_size(p)),
                     ("mla_decode_plan_create", lambda: mla.Plan(p)),
                     ("mla_decode_fwd", lambda: mla.fwd(p, ws))]:
        assert refuse(S.INVALID_VALUE, call, "sm_scale").function == fn
    fp32_o = device_problem(o=np.zeros((3, 16, 512), np.float32))
    refuse(S.UNSUPPORTED, lambda: mla.fwd(fp32_o, ws), "o_dtype FP32")
    refuse(S.UNSUPPORTED, lambda: mla.workspace_size(shape_only(num_heads=12)), "num_heads 12")
    refuse(S.INVALID_SIZE, lambda: mla.Plan(shape_only(num_slots=-1)), "num_slots")


def gpu_present():
    try:
        mla.workspace_size(device_problem())
        return True
    except mla.MlaError as e:
        assert e.status == S.NO_DEVICE, e
        return False


def test_no_device():
    if gpu_present():
        pytest.skip("a GPU is present: test_gpu.py runs these calls")
    p = device_problem()
    ws = DeviceView(np.zeros(1 << 16, np.uint8))
    refuse(S.NO_DEVICE, lambda: mla.workspace_size(shape_only()), "")
    assert refuse(S.NO_DEVICE, lambda: mla.Plan(p), "").function == "mla_decode_plan_create"
    assert refuse(S.NO_DEVICE, lambda: mla.fwd(p, ws), "").function == "mla_decode_fwd"
    assert ctypes.sizeof(p.struct) == mla.load_library().mla_decode_params_size()


def test_decode_names_torch_when_torch_is_absent():
    if "decode" in mla.__all__:
        pytest.skip("torch imports here: mla.decode is the custom op (test_gpu.py)")
    with pytest.raises(AttributeError, match="needs torch"):
        mla.decode  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        mla.nope  # noqa: B018
