"""The input forms through the binding, on the host reference (numpy): Q as q_nope + q_pe, the
cache as latent rows + rope rows (kpe_cache), the LSE at a row stride. Each is given as views
of the 576-wide arrays (what an engine's slices are) and as separate copies with other strides,
and checked against the fp64 computation of oracle.py; a bf16 rope beside an fp8 latent too
(every path serves it; test_gpu.py runs it on the GPU). Then what the binding and the library
refuse."""
import numpy as np
import pytest

import mla_decode as mla
from oracle import bf16_to_f64, check_outputs, expected, f32_to_bf16, make_problem

SPLIT_FORMATS = ("bf16", "fp8_e4m3fn", "fp8_e4m3fnuz")
MIXED_Q = [1, 3, 4, 2, 1]
MIXED_KV = [0, 2, 70, 33, 17]


def padded_copy(a, pad):
    """A copy of `a` in a larger array (its last dim padded by `pad` NaN-coded elements), as a
    view: other strides, the same values."""
    fill = 0x7FC0 if a.dtype == np.uint16 else 0x7F
    big = np.full(a.shape[:-1] + (a.shape[-1] + pad,), fill, a.dtype)
    big[..., :a.shape[-1]] = a
    return big[..., :a.shape[-1]]


def split_q(kw, copies):
    q = kw["q"]
    if copies:
        return dict(kw, q=padded_copy(q[:, :, :512], 32), q_pe=padded_copy(q[:, :, 512:], 16))
    return dict(kw, q=q[:, :, :512], q_pe=q[:, :, 512:])


def split_cache(kw, copies):
    kv = kw["kv_cache"]
    dtype = dict(kpe_dtype=kw["kv_dtype"]) if "kv_dtype" in kw else {}
    if copies:
        return dict(kw, kv_cache=padded_copy(kv[:, :512], 16),
                    kpe_cache=padded_copy(kv[:, 512:], 64), **dtype)
    return dict(kw, kv_cache=kv[:, :512], kpe_cache=kv[:, 512:], **dtype)


def strided_lse(kw):
    """The LSE as columns of a wider array (rows heads + 5 apart); the array, for checking
    that nothing between rows is written."""
    total_q, heads = kw["lse"].shape
    wide = np.full((total_q, heads + 5), np.nan, np.float32)
    return dict(kw, lse=wide[:, :heads]), wide


@pytest.mark.parametrize("copies", [False, True], ids=["views", "copies"])
@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("fmt", SPLIT_FORMATS)
def test_every_form_together(fmt, page_size, copies):
    kw, dec = make_problem(np.random.default_rng(31), fmt, MIXED_Q, MIXED_KV, page_size=page_size)
    split = split_cache(split_q(kw, copies), copies)
    split, wide = strided_lse(split)
    p = mla.Params(**split)
    s = p.struct
    assert s.q_pe and s.kpe_cache and s.kpe_dtype == (mla.DType.BF16 if fmt == "bf16" else
                                                      mla.dtype(fmt))
    assert (s.q_stride_head, s.q_pe_stride_head) == ((544, 80) if copies else (576, 576))
    assert (s.kv_stride_slot, s.kpe_stride_slot) == ((528, 128) if copies else (576, 576))
    assert s.lse_stride_token == 16 + 5
    mla.reference(p)
    check_outputs(split["o"], split["lse"], *expected(dec))
    assert np.all(np.isnan(wide[:, 16:])), "nothing written between the LSE rows"


@pytest.mark.parametrize("q_fmt", ["bf16", "fp8_e4m3fn"])
@pytest.mark.parametrize("fmt", ["bf16", "fp8_e4m3fnuz", "mxfp4", "mxfp4_fp8v"])
def test_split_q_alone(fmt, q_fmt):
    kw, dec = make_problem(np.random.default_rng(32), fmt, MIXED_Q, MIXED_KV, q_fmt=q_fmt)
    mla.reference(mla.Params(**split_q(kw, True)))
    check_outputs(kw["o"], kw["lse"], *expected(dec))


@pytest.mark.parametrize("fmt", SPLIT_FORMATS)
def test_split_cache_alone_paged_4d(fmt):
    """(num_pages, page_size, 1, 512) and (num_pages, page_size, 1, 64) caches."""
    kw, dec = make_problem(np.random.default_rng(33), fmt, MIXED_Q, MIXED_KV, page_size=16)
    split = split_cache(kw, True)
    split["kv_cache"] = np.ascontiguousarray(split["kv_cache"]).reshape(-1, 16, 1, 512)
    split["kpe_cache"] = np.ascontiguousarray(split["kpe_cache"]).reshape(-1, 16, 1, 64)
    p = mla.Params(**split)
    assert (p.struct.kv_stride_slot, p.struct.kpe_stride_slot) == (512, 64)
    mla.reference(p)
    check_outputs(kw["o"], kw["lse"], *expected(dec))


@pytest.mark.parametrize("fmt", ["fp8_e4m3fn", "fp8_e4m3fnuz"])
def test_bf16_rope_beside_an_fp8_latent_on_the_host(fmt):
    """DeepSeek-V3.2's cache: the rope in bf16 (its own values), the latent fp8 codes."""
    kw, dec = make_problem(np.random.default_rng(34), fmt, MIXED_Q, MIXED_KV)
    rope = f32_to_bf16(np.random.default_rng(35).standard_normal((kw["kv_cache"].shape[0], 64)))
    split = dict(kw, kv_cache=kw["kv_cache"][:, :512], kpe_cache=rope)
    p = mla.Params(**split)
    assert p.struct.kpe_dtype == mla.DType.BF16 and p.struct.kv_dtype == mla.dtype(fmt)
    mla.reference(p)
    dec = dict(dec, k=np.concatenate([dec["k"][:, :512], bf16_to_f64(rope)], axis=1))
    check_outputs(kw["o"], kw["lse"], *expected(dec))
    p.struct.o_dtype = mla.DType.BF16  # a GPU problem: the GPU paths serve it too
    try:
        assert mla.workspace_size(p) >= 0
    except mla.MlaError as e:  # only for want of a GPU (test_gpu.py runs it on one)
        assert e.status_name == "MLA_STATUS_NO_DEVICE", e.message


def test_dense_lse_rows_keep_stride_zero():
    kw, _ = make_problem(np.random.default_rng(36), "bf16", [1, 2], [5, 9])
    assert mla.Params(**kw).struct.lse_stride_token == 0
    assert mla.Params(**split_q(kw, False)).struct.lse_stride_token == 0


def test_shape_only_params_of_the_split_forms():
    """A shape without arrays (workspace_size, Plan): kpe_dtype says the cache is split."""
    p = mla.Params(sm_scale=0.04, batch_size=2, total_q=2, num_heads=16, max_q_len=1,
                   max_kv_len=100, kv_dtype="fp8_e4m3fn", kpe_dtype="fp8_e4m3fn", num_slots=100)
    assert (p.struct.kpe_dtype, p.struct.kpe_stride_slot, p.struct.kv_stride_slot) == (
        mla.DType.FP8_E4M3FN, 64, 512)
    if mla.backend() == "none":
        with pytest.raises(mla.MlaError) as e:
            mla.workspace_size(p)
        assert e.value.status_name == "MLA_STATUS_NO_DEVICE"


# ---- refusals -----------------------------------------------------------------------------------

def test_binding_refusals_of_the_split_forms():
    kw, _ = make_problem(np.random.default_rng(37), "fp8_e4m3fn", [1, 2], [5, 9])
    split = split_q(kw, False)
    with pytest.raises(TypeError, match="q_pe"):  # halves of different storage types
        mla.Params(**dict(split, q_pe=split["q_pe"].astype(np.uint8)))
    with pytest.raises(ValueError, match="num_heads"):
        mla.Params(**dict(split, q_pe=np.zeros((3, 8, 64), np.uint16)))
    with pytest.raises(ValueError, match="q_pe has 2 tokens"):
        mla.Params(**dict(split, q_pe=split["q_pe"][:2]))
    with pytest.raises(ValueError, match="q_pe"):  # rows narrower than 64
        mla.Params(**dict(split, q_pe=split["q_pe"][:, :, :32]))
    with pytest.raises(ValueError, match="kpe_cache"):
        mla.Params(**dict(kw, kv_cache=kw["kv_cache"][:, :512], kpe_cache=kw["kv_cache"][:-1, 512:],
                          kpe_dtype="fp8_e4m3fn"))
    with pytest.raises(TypeError, match="kpe_dtype"):  # raw uint8 rope: its dtype is needed
        mla.Params(**dict(kw, kv_cache=kw["kv_cache"][:, :512], kpe_cache=kw["kv_cache"][:, 512:]))
    lse = np.lib.stride_tricks.as_strided(kw["lse"], strides=(8 * 4, 4))  # rows 8 apart < 16
    with pytest.raises(ValueError, match="lse"):
        mla.Params(**dict(kw, lse=lse))


def test_library_refusals_of_the_split_forms():
    kw, _ = make_problem(np.random.default_rng(38), "mxfp4", [1], [5])
    rope = np.zeros((kw["kv_cache"].shape[0], 64), np.uint16)
    with pytest.raises(mla.MlaError) as e:  # MXFP4 has no split form
        mla.reference(mla.Params(**dict(kw, kpe_cache=rope)))
    assert e.value.status_name == "MLA_STATUS_UNSUPPORTED"
    kw, _ = make_problem(np.random.default_rng(39), "bf16", [1], [5])
    with pytest.raises(mla.MlaError) as e:  # an fp8 rope beside a bf16 latent
        mla.reference(mla.Params(**dict(kw, kv_cache=kw["kv_cache"][:, :512],
                                        kpe_cache=np.zeros((kw["kv_cache"].shape[0], 64), np.uint8),
                                        kpe_dtype="fp8_e4m3fn")))
    assert e.value.status_name == "MLA_STATUS_UNSUPPORTED" and "kpe_dtype" in e.value.message
    with pytest.raises(mla.MlaError) as e:  # the rope view overlaps O
        o = kw["o"]
        q_pe = o.view(np.uint16)[:, :, :64]
        mla.reference(mla.Params(**dict(kw, q=kw["q"][:, :, :512], q_pe=q_pe)))
    assert e.value.status_name == "MLA_STATUS_INVALID_VALUE" and "q_pe" in e.value.message
