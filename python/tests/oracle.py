"""Test problems in every format and an fp64 numpy computation of the decode, written from
docs/SPEC.md alone (nothing of the library): the decoders of each format and the attention.

make_problem() returns the stored codes (numpy arrays, as the binding takes them), the
keyword arguments of mla_decode.Params for them, and the decoded values; expected() computes
O and LSE from the decoded values in float64.
"""
import numpy as np

HEAD_DIM_QK, HEAD_DIM_V = 576, 512
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
FORMATS = ("bf16", "fp8_e4m3fn", "fp8_e4m3fnuz", "mxfp4", "mxfp4_fp8v")
# a code that decodes to NaN, written into cache slots no element may read
NAN_CODE = {"bf16": 0x7FC0, "fp8_e4m3fn": 0x7F, "fp8_e4m3fnuz": 0x80, "e8m0": 0xFF}


# ---- decoders (SPEC.md, "Formats and where they are defined") ------------------------------

def bf16_to_f64(codes):
    return (codes.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def f32_to_bf16(x):
    """Round to nearest even, as uint16 codes (finite inputs)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16).astype(np.uint16)


def fp8_to_f64(codes, fnuz):
    """e4m3fn (bias 7, S.1111.111 NaN) or e4m3fnuz (bias 8, 0x80 the only NaN)."""
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    exp, man = (c >> 3) & 0xF, c & 0x7
    bias = 8 if fnuz else 7
    mag = np.where(exp == 0, man / 8.0 * 2.0 ** (1 - bias), (1 + man / 8.0) * 2.0 ** (exp - bias))
    out = sign * mag
    nan = (c == 0x80) if fnuz else ((c & 0x7F) == 0x7F)
    return np.where(nan, np.nan, out)


def mxfp4_to_f64(packed, scales):
    """(slots, 288) e2m1 pairs (even index in the low nibble) with (slots, >= 18) e8m0 codes
    -> (slots, 576)."""
    nib = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), np.int64)
    nib[..., 0::2] = packed & 0xF
    nib[..., 1::2] = packed >> 4
    vals = np.where(nib & 8, -1.0, 1.0) * E2M1[nib & 7]
    sc = scales[:, :18].astype(np.float64)
    block = np.where(sc == 255, np.nan, 2.0 ** (sc - 127))
    return vals * np.repeat(block, 32, axis=1)


def f32(x):
    """The value a float field of the struct holds."""
    return float(np.float32(x))


# ---- problems ------------------------------------------------------------------------------

def _fp8_codes(rng, shape, fnuz):
    c = rng.integers(0, 256, size=shape).astype(np.uint8)
    if fnuz:
        c[c == 0x80] = 0
    else:
        c[(c & 0x7F) == 0x7F] ^= 1
    return c


def make_problem(rng, fmt, q_lens, kv_lens, heads=16, page_size=0, q_fmt="bf16",
                 o_dtype=np.float32, spare_slots=3):
    """A decode problem: element b has q_lens[b] query tokens over kv_lens[b] cached tokens;
    page_size 0 = a contiguous cache, else a shuffled page table with a spare list entry per
    element and spare pages. Slots no element may read hold NaN codes.

    Returns (kwargs of mla_decode.Params, decoded dict: q, k, v (float64), slots per element,
    sm_scale)."""
    batch = len(q_lens)
    qo = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    kv = np.concatenate([[0], np.cumsum(kv_lens)]).astype(np.int32)
    total_q = int(qo[-1])
    sm_scale = 1.0 / 24.0
    kw = dict(sm_scale=sm_scale)

    # where each element's tokens live
    if page_size:
        pages = [-(-n // page_size) + 1 for n in kv_lens]  # one spare entry each
        num_pages = sum(pages) + 2
        ids = rng.permutation(num_pages).astype(np.int32)
        page_indptr = np.concatenate([[0], np.cumsum(pages)]).astype(np.int32)
        num_slots = num_pages * page_size
        slots = []
        for b, n in enumerate(kv_lens):
            t = np.arange(n)
            slots.append(ids[page_indptr[b] + t // page_size] * page_size + t % page_size)
        kw.update(kv_page_indptr=page_indptr, kv_page_indices=ids[:page_indptr[-1]].copy(),
                  page_size=page_size)
    else:
        num_slots = int(kv[-1]) + spare_slots
        slots = [np.arange(kv[b], kv[b + 1]) for b in range(batch)]
    used = np.zeros(num_slots, bool)
    for s in slots:
        used[s] = True

    # Q
    q_val = rng.standard_normal((total_q, heads, HEAD_DIM_QK)) * 0.5
    if q_fmt == "bf16":
        q = f32_to_bf16(q_val)
        q_dec = bf16_to_f64(q)
    else:
        q = _fp8_codes(rng, q_val.shape, q_fmt == "fp8_e4m3fnuz")
        kw.update(q_dtype=q_fmt, q_scale=0.125)
        q_dec = fp8_to_f64(q, q_fmt == "fp8_e4m3fnuz") * f32(0.125)

    # the cache
    if fmt == "bf16":
        cache = f32_to_bf16(rng.standard_normal((num_slots, HEAD_DIM_QK)))
        cache[~used] = NAN_CODE["bf16"]
        k_dec = bf16_to_f64(cache)
    elif fmt.startswith("fp8"):
        fnuz = fmt == "fp8_e4m3fnuz"
        cache = _fp8_codes(rng, (num_slots, HEAD_DIM_QK), fnuz)
        cache[~used] = NAN_CODE[fmt]
        kw.update(kv_dtype=fmt, kv_scale=0.01)
        k_dec = fp8_to_f64(cache, fnuz) * f32(0.01)
    else:  # MXFP4 keys (and values, unless fp8 V)
        cache = rng.integers(0, 256, size=(num_slots, 288)).astype(np.uint8)
        scales = rng.integers(124, 130, size=(num_slots, 24)).astype(np.uint8)
        scales[:, 18:] = NAN_CODE["e8m0"]  # padding columns: never read
        scales[~used] = NAN_CODE["e8m0"]
        kw.update(kv_dtype="mxfp4", kv_block_scales=scales)
        k_dec = mxfp4_to_f64(cache, scales)
    v_dec = k_dec[:, :HEAD_DIM_V]
    if fmt == "mxfp4_fp8v":
        v_cache = _fp8_codes(rng, (num_slots, HEAD_DIM_QK), False)  # 576-byte rows, 512 used
        v_cache[~used] = NAN_CODE["fp8_e4m3fn"]
        kw.update(v_cache=v_cache, v_dtype="fp8_e4m3fn", v_scale=0.05)
        v_dec = fp8_to_f64(v_cache[:, :HEAD_DIM_V], False) * f32(0.05)

    o = np.full((total_q, heads, HEAD_DIM_V), np.nan if o_dtype == np.float32 else 0x7FC0,
                dtype=o_dtype)
    lse = np.full((total_q, heads), np.nan, np.float32)
    kw.update(q=q, kv_cache=cache, qo_indptr=qo, kv_indptr=kv, o=o, lse=lse)
    dec = dict(q=q_dec, k=k_dec, v=v_dec, slots=slots, qo=qo, kv=kv, sm_scale=f32(sm_scale))
    return kw, dec


def expected(dec):
    """(O, LSE) in float64: every query row against the cache rows it may see (causal
    against the end of the cache); O = 0, LSE = -inf where it sees none."""
    q, k, v = dec["q"], dec["k"], dec["v"]
    total_q, heads = q.shape[:2]
    o = np.zeros((total_q, heads, HEAD_DIM_V))
    lse = np.full((total_q, heads), -np.inf)
    qo, kvp = dec["qo"], dec["kv"]
    for b, slots in enumerate(dec["slots"]):
        q_len, kv_len = qo[b + 1] - qo[b], kvp[b + 1] - kvp[b]
        for i in range(q_len):
            seen = slots[:max(kv_len - q_len + i + 1, 0)]
            if len(seen) == 0:
                continue
            t = qo[b] + i
            s = dec["sm_scale"] * (q[t] @ k[seen].T)  # (heads, seen)
            m = s.max(axis=1, keepdims=True)
            p = np.exp(s - m)
            total = p.sum(axis=1, keepdims=True)
            o[t] = (p @ v[seen]) / total
            lse[t] = (m + np.log(total))[:, 0]
    return o, lse


def check_outputs(o, lse, want_o, want_lse):
    """O within its dtype's rounding of the fp64 result (float32: 2^-20 of the row's largest
    |O|; bf16 codes: 2^-8 relative, one rounding), LSE (unless None) within float32 rounding,
    -inf exactly where nothing is visible."""
    rowmax = np.abs(want_o).max(axis=2, keepdims=True)
    if o.dtype == np.uint16:
        got, tol = bf16_to_f64(o), 2.0 ** -8 * np.abs(want_o) + 1e-30
    else:
        got, tol = o.astype(np.float64), 2.0 ** -20 * rowmax + 2.0 ** -22 * np.abs(want_o)
    err = np.abs(got - want_o)
    bad = ~(err <= tol)  # NaN counts as bad
    assert not bad.any(), "O: %d elements off, first at %s: %r vs %r" % (
        bad.sum(), np.argwhere(bad)[0], got[bad][0], want_o[bad][0])
    if lse is None:
        return
    empty = np.isneginf(want_lse)
    assert np.array_equal(np.isneginf(lse), empty), "LSE -inf where nothing is visible"
    assert np.all(np.abs(lse[~empty] - want_lse[~empty])
                  <= 2.0 ** -22 * np.maximum(1.0, np.abs(want_lse[~empty]))), "LSE"


class DeviceView:
    """An array seen only through __cuda_array_interface__: a device array's own (a torch CUDA
    tensor's), or a host array's presented as device memory, for argument checks that come
    before the library looks at the device (its address is never dereferenced by a call that
    fails those checks, nor by a library without a GPU)."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = (getattr(array, "__cuda_array_interface__", None)
                                         or dict(array.__array_interface__, version=3))


class DLPackOnly:
    """Exposes an array only through __dlpack__ (as a producer other than numpy or torch
    would)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()
