"""The host reference through the binding, on numpy arrays, against an fp64 numpy computation
(oracle.py) and against the known-answer vectors of tests/data/vectors: every format,
contiguous and paged caches, mixed q_len, zero lengths, fp8 Q, bf16 and float32 O."""
import os

import numpy as np
import pytest

import mla_decode as mla
from conftest import REPO_ROOT
from oracle import FORMATS, check_outputs, expected, make_problem

# q_len 3 over a 2-token cache: its first query sees nothing; an element with no cache at all
MIXED_Q = [1, 3, 4, 2, 1]
MIXED_KV = [0, 2, 70, 33, 17]


def run(kw, dec):
    mla.reference(mla.Params(**kw))
    check_outputs(kw["o"], kw["lse"], *expected(dec))


@pytest.mark.parametrize("page_size", [0, 1, 16])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_mixed_q_len(fmt, page_size):
    kw, dec = make_problem(np.random.default_rng(1), fmt, MIXED_Q, MIXED_KV, page_size=page_size)
    run(kw, dec)


@pytest.mark.parametrize("fmt", FORMATS)
def test_bf16_output(fmt):
    kw, dec = make_problem(np.random.default_rng(2), fmt, [1, 1, 2], [9, 0, 40],
                           o_dtype=np.uint16)
    run(kw, dec)


@pytest.mark.parametrize("q_fmt", ["fp8_e4m3fn", "fp8_e4m3fnuz"])
@pytest.mark.parametrize("fmt", ["bf16", "fp8_e4m3fn", "mxfp4"])
def test_fp8_query(fmt, q_fmt):
    kw, dec = make_problem(np.random.default_rng(3), fmt, [1, 2], [30, 12], q_fmt=q_fmt)
    run(kw, dec)


@pytest.mark.parametrize("heads", [32, 64, 128])
def test_heads(heads):
    kw, dec = make_problem(np.random.default_rng(4), "fp8_e4m3fn", [1, 2], [20, 5], heads=heads,
                           page_size=16)
    run(kw, dec)


def test_every_length_zero():
    kw, dec = make_problem(np.random.default_rng(5), "bf16", [1, 2, 1], [0, 0, 0])
    run(kw, dec)
    assert np.all(kw["o"] == 0) and np.all(np.isneginf(kw["lse"]))


def test_page_size_64_and_layout_from_a_4d_cache():
    """A (num_pages, page_size, 1, 576) cache: page_size and num_slots come from its shape."""
    kw, dec = make_problem(np.random.default_rng(6), "fp8_e4m3fn", [1, 1], [100, 130],
                           page_size=64)
    kw["kv_cache"] = kw["kv_cache"].reshape(-1, 64, 1, 576)
    del kw["page_size"]
    p = mla.Params(**kw)
    assert (p.struct.page_size, p.struct.num_slots, p.struct.kv_stride_slot) == (64, kw[
        "kv_cache"].shape[0] * 64, 576)
    run(kw, dec)


def test_strided_q_and_o():
    """Q and O as views with padded head and token strides."""
    kw, dec = make_problem(np.random.default_rng(7), "bf16", [2, 1], [10, 3])
    q = np.zeros((3, 16, 640), np.uint16)
    q[:, :, :576] = kw["q"]
    o = np.full((3, 16, 520), np.nan, np.float32)
    kw.update(q=q[:, :, :576], o=o[:, :, :512])
    p = mla.Params(**kw)
    assert (p.struct.q_stride_head, p.struct.o_stride_token) == (640, 16 * 520)
    mla.reference(p)
    check_outputs(o[:, :, :512], kw["lse"], *expected(dec))
    assert np.all(np.isnan(o[:, :, 512:])), "nothing written past the 512 dims of a head"


def test_one_token_with_any_token_stride():
    """A dim of one element may carry any stride (torch views do): it is not used."""
    kw, dec = make_problem(np.random.default_rng(9), "bf16", [1], [25])
    q = np.lib.stride_tricks.as_strided(kw["q"], strides=(2,) + kw["q"].strides[1:])
    assert mla.Params(**dict(kw, q=q)).struct.q_stride_token == 16 * 576
    run(dict(kw, q=q), dec)


def test_batch_invariant_flag():
    kw, dec = make_problem(np.random.default_rng(9), "fp8_e4m3fn", [1, 2], [30, 70])
    params = mla.Params(**kw, batch_invariant=True)
    assert params.struct.flags == mla.FLAG_BATCH_INVARIANT
    mla.reference(params)
    check_outputs(kw["o"], kw["lse"], *expected(dec))
    params = mla.Params(**kw, fp8_mma=True)  # accepted; the reference ignores it
    assert params.struct.flags == mla.FLAG_FP8_MMA
    mla.reference(params)
    check_outputs(kw["o"], kw["lse"], *expected(dec))
    params.struct.flags = 4  # an unknown bit
    with pytest.raises(mla.MlaError) as e:
        mla.reference(params)
    assert e.value.status_name == "MLA_STATUS_INVALID_VALUE"


def test_without_lse():
    kw, dec = make_problem(np.random.default_rng(8), "mxfp4", [1], [50])
    lse = kw.pop("lse")
    mla.reference(mla.Params(**kw))
    check_outputs(kw["o"], None, *expected(dec))
    assert np.all(np.isnan(lse))


# ---- known-answer vectors (computed outside the project, tests/data/vectors/README.md) ------

VECTORS = os.path.join(REPO_ROOT, "tests", "data", "vectors")
CASES = sorted(d for d in os.listdir(VECTORS) if os.path.isdir(os.path.join(VECTORS, d)))


def load_vector(case):
    """(manifest values, {file stem: array}) of one case."""
    values, files = {}, {}
    storage = {"bf16": np.uint16, "int32": np.int32, "uint8": np.uint8, "float32": np.float32}
    with open(os.path.join(VECTORS, case, "manifest.txt")) as f:
        for line in f:
            if line.startswith("file "):
                name, desc = line[5:].split(" = ", 1)
                shape = tuple(int(n) for n in desc.rsplit("shape=", 1)[1].split("x"))
                data = np.fromfile(os.path.join(VECTORS, case, name),
                                   storage[desc.split()[0]])
                files[name[:-4]] = data.reshape(shape)
            elif " = " in line and not line.startswith("#"):
                key, value = line.split(" = ", 1)
                values[key.strip()] = value.strip()
    return values, files


@pytest.mark.parametrize("case", CASES)
def test_known_answer_vectors(case):
    values, f = load_vector(case)
    fmt = values["kv_format"]
    kw = dict(q=f["q"], qo_indptr=f["qo_indptr"], kv_indptr=f["kv_indptr"],
              sm_scale=float(values["sm_scale"]), o=np.zeros(f["expected_o"].shape, np.float32),
              lse=np.zeros(f["expected_lse"].shape, np.float32))
    if "page_indptr" in f:
        kw.update(kv_page_indptr=f["page_indptr"], kv_page_indices=f["page_indices"],
                  page_size=int(values["page_size"]))
    if fmt == "mxfp4_k_fp8_v":
        kw.update(kv_cache=f["k"], kv_dtype="mxfp4", kv_block_scales=f["k_scale"],
                  v_cache=f["v"], v_dtype="fp8_e4m3fn", v_scale=float(f["v_scale"][0]))
    elif fmt == "mxfp4":
        kw.update(kv_cache=f["kv"], kv_dtype="mxfp4", kv_block_scales=f["kv_scale"])
    else:
        kw.update(kv_cache=f["kv"])
        if fmt != "bf16":
            kw.update(kv_dtype=fmt, kv_scale=float(f["kv_scale"][0]))
    mla.reference(mla.Params(**kw))
    want_o, want_lse = f["expected_o"].astype(np.float64), f["expected_lse"]
    # the expected values are fp64 results cast to float32: allow that rounding twice
    check_outputs(kw["o"], kw["lse"], want_o, want_lse.astype(np.float64))
