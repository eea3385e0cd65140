"""The GPU entry points on torch tensors (skipped without torch, a CUDA/HIP device visible to
torch, or a library with a GPU backend):

* fwd on every format, contiguous and paged caches, mixed q_len, 16 and 128 heads, fp8 Q,
  against a torch fp32 computation (its own fp8 decode, an MXFP4 decode in torch ops) and
  against the library's host reference;
* one Plan prepared once and run for several layers, each with its own Q, cache and O;
* a step (prepare + run) captured in a torch.cuda.CUDAGraph and replayed with new lengths
  written into the same indptr tensors; the custom op in a graph as well;
* the custom op torch.ops.mla_decode.decode: opcheck, torch.compile(fullgraph=True);
* inputs through DLPack and __cuda_array_interface__ objects, torch fp8 dtypes, explicit
  streams; WORKSPACE_TOO_SMALL and a plan of another shape refused, outputs untouched;
* the input forms, and a bf16 rope beside an fp8 latent (DeepSeek-V3.2's cache, rope values
  up to about 1e4) through fwd, a plan and the custom op (`-k bf16_rope`).

Tolerance (tests/common/compare.h, the SPEC's "within bf16 output rounding"): every element
of O within one bf16 ulp of the reference or 2^-8 of its row's largest |O|; LSE within
1e-3 + 1e-5 |LSE|, -inf exactly where a query sees nothing.
"""
import numpy as np
import pytest

import mla_decode as mla
from oracle import FORMATS, DeviceView, DLPackOnly, f32, make_problem

torch = pytest.importorskip("torch", reason="the GPU tests need torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA/HIP device visible to torch", allow_module_level=True)
if mla.backend() == "none":
    pytest.skip("the library was built without a GPU backend", allow_module_level=True)

DEV = "cuda"
MIXED_Q = [1, 3, 4, 2, 1]
MIXED_KV = [0, 2, 700, 333, 17]
FP8_TORCH = {"fp8_e4m3fn": "float8_e4m3fn", "fp8_e4m3fnuz": "float8_e4m3fnuz"}


@pytest.fixture(autouse=True)
def exact_fp32_matmul():
    """The fp32 reference must not run on TF32."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32 = saved


def to_device(kw):
    """Params arguments with every numpy array on the GPU (uint16 bf16 codes as bfloat16)."""
    out = {}
    for k, v in kw.items():
        if isinstance(v, np.ndarray):
            t = torch.from_numpy(v.view(np.int16) if v.dtype == np.uint16 else v).to(DEV)
            v = t.view(torch.bfloat16) if v.dtype == np.uint16 else t
        out[k] = v
    return out


def lengths(kw):
    """max_q_len, max_kv_len of a problem's host indptrs."""
    qo, kv = kw["qo_indptr"], kw["kv_indptr"]
    return dict(max_q_len=int(np.diff(qo).max()), max_kv_len=int(np.diff(kv).max()))


def problem(fmt="fp8_e4m3fn", q_lens=MIXED_Q, kv_lens=MIXED_KV, seed=0, **make):
    """(host kwargs, decoded dict, device kwargs with max lengths) of one problem, O bf16."""
    kw, dec = make_problem(np.random.default_rng(seed), fmt, q_lens, kv_lens,
                           o_dtype=np.uint16, **make)
    return kw, dec, dict(to_device(kw), **lengths(kw))


# ---- the torch fp32 reference ----------------------------------------------------------------

def _fp8(t, name):
    return t.view(getattr(torch, FP8_TORCH[name])).float()


def torch_decode(d):
    """(Q, K, V) in fp32 from the device arguments d of a problem."""
    q = d["q"].float() if d["q"].dtype == torch.bfloat16 else _fp8(d["q"], d["q_dtype"]) * f32(
        d["q_scale"])
    cache, kv_dtype = d["kv_cache"], d.get("kv_dtype", "bf16")
    if kv_dtype == "bf16":
        k = cache.float()
    elif kv_dtype in FP8_TORCH:
        k = _fp8(cache, kv_dtype) * f32(d["kv_scale"])
    else:  # MXFP4: e2m1 pairs (even index low) times 2^(e8m0 - 127) per 32 values
        e2m1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], device=DEV)
        nib = torch.stack([cache & 0xF, cache >> 4], dim=-1).reshape(cache.shape[0], 576).long()
        values = torch.where(nib >= 8, -1.0, 1.0) * e2m1[nib & 7]
        scales = d["kv_block_scales"][:, :18].float()
        k = values * torch.exp2(scales - 127).repeat_interleave(32, dim=1)
    v = k[:, :512]
    if d.get("v_cache") is not None:
        v = _fp8(d["v_cache"][:, :512], d["v_dtype"]) * f32(d["v_scale"])
    return q, k, v


def torch_reference(d, slots, qo, kv, rope=None):
    """fp32 (O, LSE) of the decode: slots[b] = the cache slots of element b's tokens; rope: K's
    dims 512..575 (a bf16 rope cache beside an fp8 latent) instead of the cache's own."""
    q, k, v = torch_decode(d)
    if rope is not None:
        k = torch.cat([k[:, :512], rope.float()], dim=1)
    total_q, heads = q.shape[:2]
    o = torch.zeros(total_q, heads, 512, device=DEV)
    lse = torch.full((total_q, heads), float("-inf"), device=DEV)
    for b in range(len(qo) - 1):
        q0, q_len, kv_len = int(qo[b]), int(qo[b + 1] - qo[b]), int(kv[b + 1] - kv[b])
        if q_len == 0:
            continue
        idx = torch.as_tensor(np.asarray(slots[b], np.int64), device=DEV)
        s = torch.einsum("thd,jd->thj", q[q0:q0 + q_len], k[idx]) * f32(d["sm_scale"])
        last = kv_len - q_len + torch.arange(q_len, device=DEV)  # last position query t sees
        hidden = torch.arange(kv_len, device=DEV)[None, :] > last[:, None]
        s = s.masked_fill(hidden[:, None, :], float("-inf"))
        row_lse = torch.logsumexp(s, dim=-1)
        p = torch.nan_to_num(torch.exp(s - row_lse[..., None]), nan=0.0)
        o[q0:q0 + q_len] = torch.einsum("thj,jd->thd", p, v[idx])
        lse[q0:q0 + q_len] = row_lse
    return o, lse


def assert_close(o, lse, want_o, want_lse):
    """The module's tolerance, every element; NaN fails."""
    o = o.float()
    ref = want_o.abs()
    ulp = torch.exp2(torch.floor(torch.log2(ref.clamp_min(1e-30))) - 7)
    allowed = torch.maximum(ref.amax(dim=-1, keepdim=True) / 256 + 1e-6, ulp)
    bad = ~((o - want_o).abs() <= allowed)
    assert not bad.any(), "O: %d elements off, first at %s: %r vs %r" % (
        int(bad.sum()), bad.nonzero()[0].tolist(), o[bad][0].item(), want_o[bad][0].item())
    if lse is None:
        return
    empty = torch.isneginf(want_lse)
    assert torch.equal(torch.isneginf(lse), empty), "LSE -inf where nothing is visible"
    diff = (lse[~empty] - want_lse[~empty]).abs()
    assert bool((diff <= 1e-3 + 1e-5 * want_lse[~empty].abs()).all()), "LSE"


def check(d, dec, o=None, lse=None):
    want = torch_reference(d, dec["slots"], dec["qo"], dec["kv"])
    assert_close(d["o"] if o is None else o, d["lse"] if lse is None else lse, *want)


def host_reference(kw):
    """The library's host reference of the same problem: (O fp32, LSE) on the GPU."""
    host = dict(kw, o=np.zeros(kw["o"].shape, np.float32), lse=np.zeros(kw["lse"].shape,
                                                                         np.float32))
    mla.reference(mla.Params(**host))
    return torch.from_numpy(host["o"]).to(DEV), torch.from_numpy(host["lse"]).to(DEV)


# ---- fwd ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("fmt", FORMATS)
def test_fwd_every_format(fmt, page_size):
    kw, dec, d = problem(fmt, page_size=page_size)
    mla.fwd(mla.Params(**d))
    torch.cuda.synchronize()
    check(d, dec)
    assert_close(d["o"], d["lse"], *host_reference(kw))


@pytest.mark.parametrize("q_fmt", ["fp8_e4m3fn", "fp8_e4m3fnuz"])
def test_fwd_fp8_query(q_fmt):
    kw, dec, d = problem("fp8_e4m3fn", q_fmt=q_fmt, seed=1)
    mla.fwd(mla.Params(**d))
    torch.cuda.synchronize()
    check(d, dec)


@pytest.mark.parametrize("fmt", ["bf16", "fp8_e4m3fn", "mxfp4"])
def test_fwd_128_heads_paged(fmt):
    kw, dec, d = problem(fmt, q_lens=[1, 2, 1], kv_lens=[4096, 1500, 0], heads=128,
                         page_size=64, seed=2)
    mla.fwd(mla.Params(**d))
    torch.cuda.synchronize()
    check(d, dec)


def test_fwd_every_length_zero():
    kw, dec, d = problem("bf16", q_lens=[1, 1], kv_lens=[0, 0], seed=3)
    mla.fwd(mla.Params(**d))
    torch.cuda.synchronize()
    assert bool((d["o"] == 0).all()) and bool(torch.isneginf(d["lse"]).all())


def test_fwd_torch_fp8_dtypes_and_array_protocols():
    """kv_dtype from a torch.float8_e4m3fn cache; Q through DLPack, the cache through
    __cuda_array_interface__ (raw uint8, kv_dtype given); an explicit stream object."""
    kw, dec, d = problem("fp8_e4m3fn", seed=4)
    typed = dict(d, kv_cache=d["kv_cache"].view(torch.float8_e4m3fn))
    del typed["kv_dtype"]
    p = mla.Params(**typed)
    assert p.struct.kv_dtype == mla.DType.FP8_E4M3FN
    mla.fwd(p)
    torch.cuda.synchronize()
    check(d, dec)

    d["o"].fill_(float("nan"))
    ws = torch.empty(1 << 24, dtype=torch.uint8, device=DEV)  # alive until side is done
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    mla.fwd(mla.Params(**dict(d, q=DLPackOnly(d["q"]), kv_cache=DeviceView(d["kv_cache"]))),
            workspace=ws, stream=side)
    side.synchronize()
    check(d, dec)


def test_fwd_on_torchs_current_stream():
    kw, dec, d = problem("mxfp4", seed=5)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        mla.fwd(mla.Params(**d))  # the workspace from torch's allocator, on `side`
    side.synchronize()
    check(d, dec)


# ---- plans -------------------------------------------------------------------------------------

def test_plan_reused_across_layers():
    """One plan, prepared once for the step; each layer runs it with its own Q, cache, cache
    scale and O (the same lengths: a contiguous cache lays every layer out alike)."""
    layers = [problem("fp8_e4m3fn", seed=10 + i)[1:] for i in range(3)]
    for i, (_, d) in enumerate(layers):
        d["kv_scale"] = 0.01 * (i + 1)
    p0 = mla.Params(**layers[0][1])
    with mla.Plan(p0) as plan:
        assert plan.describe()
        ws = torch.empty(plan.workspace_size, dtype=torch.uint8, device=DEV)
        plan.prepare(p0, ws)
        for _, d in layers:
            plan.run(p0.replace(q=d["q"], kv_cache=d["kv_cache"], kv_scale=d["kv_scale"],
                                o=d["o"], lse=d["lse"]), ws)
        torch.cuda.synchronize()
    for dec, d in layers:
        check(d, dec)


def test_plan_from_a_shape_alone():
    """A plan made from the host sizes only (no tensors) is the plan of the tensors' problem."""
    kw, dec, d = problem("mxfp4", seed=13)
    p = mla.Params(**d)
    shape = mla.Params(sm_scale=d["sm_scale"], batch_size=5, total_q=sum(MIXED_Q),
                       num_heads=16, num_slots=p.struct.num_slots, max_q_len=4,
                       max_kv_len=max(MIXED_KV), kv_dtype="mxfp4")
    with mla.Plan(shape) as plan, mla.Plan(p) as same:
        assert (plan.workspace_size, plan.describe()) == (same.workspace_size, same.describe())
        assert mla.workspace_size(shape) == mla.workspace_size(p)
        ws = torch.empty(plan.workspace_size, dtype=torch.uint8, device=DEV)
        plan.prepare(p, ws)
        plan.run(p, ws)
        torch.cuda.synchronize()
    check(d, dec)


def test_plan_refuses_what_it_was_not_made_for():
    kw, dec, d = problem("fp8_e4m3fn", seed=6)
    p = mla.Params(**d)
    with mla.Plan(p) as plan:
        ws = torch.empty(max(plan.workspace_size, 1), dtype=torch.uint8, device=DEV)
        other = mla.Params(**dict(d, max_kv_len=d["max_kv_len"] * 2))
        with pytest.raises(mla.MlaError) as e:
            plan.run(other, ws)
        assert e.value.status == mla.Status.INVALID_VALUE
    with pytest.raises(ValueError, match="closed"):
        plan.describe()
    torch.cuda.synchronize()
    assert bool(torch.isnan(d["o"].float()).all()), "a refused run wrote O"


def test_workspace_too_small():
    for kv_len in (8192, 32768, 131072):  # a long single element takes the split-KV path
        kw, dec, d = problem("fp8_e4m3fn", q_lens=[1], kv_lens=[kv_len], seed=7)
        p = mla.Params(**d)
        needed = mla.workspace_size(p)
        if needed > 0:
            break
    else:
        pytest.fail("no split-KV problem among the lengths tried (workspace size always 0)")
    ws = torch.empty(needed - 1, dtype=torch.uint8, device=DEV)
    with pytest.raises(mla.MlaError) as e:
        mla.fwd(p, ws)
    assert e.value.status == mla.Status.WORKSPACE_TOO_SMALL
    torch.cuda.synchronize()
    assert bool(torch.isnan(d["o"].float()).all()), "a refused call wrote O"


# ---- graphs ------------------------------------------------------------------------------------

GRAPH_STEPS = [([1, 2, 1, 1], [300, 17, 0, 120]), ([2, 1, 1, 1], [5, 299, 64, 1]),
               ([1, 1, 1, 2], [0, 0, 0, 2]), ([1, 1, 2, 1], [300, 300, 300, 300])]


def graph_problem():
    """A cache of 4 x 300 contiguous slots (all readable), static indptr tensors."""
    kw, dec, d = problem("fp8_e4m3fn", q_lens=GRAPH_STEPS[0][0], kv_lens=[300] * 4, seed=8)
    d.update(max_q_len=2, max_kv_len=300)
    return d


def write_lengths(d, q_lens, kv_lens):
    """New lengths into the captured indptr tensors; the slots each element then reads."""
    qo = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    kv = np.concatenate([[0], np.cumsum(kv_lens)]).astype(np.int32)
    d["qo_indptr"].copy_(torch.from_numpy(qo))
    d["kv_indptr"].copy_(torch.from_numpy(kv))
    return dict(qo=qo, kv=kv, slots=[np.arange(kv[b], kv[b + 1]) for b in range(len(q_lens))])


def capture(step):
    """step() warmed up on a side stream, then captured; (graph, what the capture returned)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    return graph, out


def test_graph_of_a_step_replayed_with_new_lengths():
    d = graph_problem()
    p = mla.Params(**d)
    with mla.Plan(p) as plan:
        ws = torch.empty(plan.workspace_size, dtype=torch.uint8, device=DEV)
        graph, _ = capture(lambda: (plan.prepare(p, ws), plan.run(p, ws)))
        for q_lens, kv_lens in GRAPH_STEPS:
            layout = write_lengths(d, q_lens, kv_lens)
            d["o"].fill_(float("nan"))
            d["lse"].fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            check(d, layout)


def decode_args(d):
    return (d["q"], d["kv_cache"], d["qo_indptr"], d["kv_indptr"], d["sm_scale"],
            d["max_q_len"], d["max_kv_len"], d["kv_dtype"], d["kv_scale"])


def test_custom_op_in_a_graph():
    d = graph_problem()
    graph, (o, lse) = capture(lambda: mla.decode(*decode_args(d)))
    for q_lens, kv_lens in GRAPH_STEPS:
        layout = write_lengths(d, q_lens, kv_lens)
        graph.replay()
        torch.cuda.synchronize()
        check(d, layout, o, lse)


# ---- the custom op -----------------------------------------------------------------------------

@pytest.mark.skipif(not hasattr(torch.library, "custom_op"), reason="torch < 2.4: no custom_op")
def test_custom_op_opcheck_and_compile():
    kw, dec, d = problem("fp8_e4m3fn", seed=9)
    args = decode_args(d)
    op = torch.ops.mla_decode.decode
    torch.library.opcheck(op.default, args, test_utils=("test_schema", "test_faketensor",
                                                        "test_aot_dispatch_dynamic"))
    o, lse = op(*args)
    torch.cuda.synchronize()
    check(d, dec, o, lse)

    @torch.compile(fullgraph=True, backend="aot_eager")
    def scaled(*a):
        out, l = torch.ops.mla_decode.decode(*a)
        return out.float() * 2, l + 1

    o2, lse2 = scaled(*args)
    torch.cuda.synchronize()
    assert torch.equal(o2, o.float() * 2) and torch.equal(lse2, lse + 1)


# ---- input forms (the header's "Input forms") --------------------------------------------------

@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("fmt", ["bf16", "fp8_e4m3fn", "fp8_e4m3fnuz"])
def test_fwd_split_forms_as_views(fmt, page_size):
    """q_nope / q_pe and the latent / rope caches as slices of the 576-wide tensors (as an
    engine's views are), the LSE as columns of a wider tensor: the same numbers as the
    576-wide forms, bit for bit, and nothing written between the LSE rows."""
    kw, dec, d = problem(fmt, page_size=page_size, seed=40)
    mla.fwd(mla.Params(**d))
    torch.cuda.synchronize()
    check(d, dec)
    wide_lse = torch.full((d["lse"].shape[0], 16 + 4), float("nan"), device=DEV)
    split = dict(d, q=d["q"][:, :, :512], q_pe=d["q"][:, :, 512:],
                 kv_cache=d["kv_cache"][:, :512], kpe_cache=d["kv_cache"][:, 512:],
                 o=torch.full_like(d["o"], float("nan")), lse=wide_lse[:, :16])
    if "kv_dtype" in d:
        split["kpe_dtype"] = d["kv_dtype"]
    p = mla.Params(**split)
    assert p.struct.q_pe and p.struct.kpe_cache and p.struct.lse_stride_token == 20
    mla.fwd(p)
    torch.cuda.synchronize()
    assert torch.equal(split["o"], d["o"]) and torch.equal(split["lse"], d["lse"])
    assert bool(torch.isnan(wide_lse[:, 16:]).all())


@pytest.mark.parametrize("fmt", ["bf16", "fp8_e4m3fn"])
def test_split_forms_as_copies_through_a_plan_and_the_custom_op(fmt):
    """Separate contiguous q_nope, q_pe, latent and rope tensors: a plan made from the
    576-wide params runs them (the forms are not part of a plan's shape); the custom op takes
    them too."""
    kw, dec, d = problem(fmt, seed=41)
    kpe = dict(kpe_dtype=d["kv_dtype"]) if "kv_dtype" in d else {}
    split = dict(d, q=d["q"][:, :, :512].contiguous(), q_pe=d["q"][:, :, 512:].contiguous(),
                 kv_cache=d["kv_cache"][:, :512].contiguous(),
                 kpe_cache=d["kv_cache"][:, 512:].contiguous(), **kpe)
    with mla.Plan(mla.Params(**d)) as plan:
        ws = torch.empty(max(plan.workspace_size, 1), dtype=torch.uint8, device=DEV)
        p = mla.Params(**split)
        plan.prepare(p, ws)
        plan.run(p, ws)
        torch.cuda.synchronize()
    check(d, dec)
    o, lse = mla.decode(split["q"], split["kv_cache"], d["qo_indptr"], d["kv_indptr"],
                        d["sm_scale"], d["max_q_len"], d["max_kv_len"],
                        kv_dtype=d.get("kv_dtype", ""), kv_scale=d.get("kv_scale", 1.0),
                        q_pe=split["q_pe"], kpe_cache=split["kpe_cache"],
                        kpe_dtype=d.get("kv_dtype", ""))
    torch.cuda.synchronize()
    check(d, dec, o, lse)


@pytest.mark.parametrize("rope_std", [1.0, 2500.0], ids=["rope_unit", "rope_large"])
@pytest.mark.parametrize("page_size", [0, 16])
@pytest.mark.parametrize("fmt", ["fp8_e4m3fn", "fp8_e4m3fnuz"])
def test_bf16_rope_beside_fp8_latent_on_the_gpu(fmt, page_size, rope_std):
    """DeepSeek-V3.2's cache: fp8 latent codes (times kv_scale) beside a bf16 rope cache (its
    values as they are, up to about 1e4 with rope_large: no f16 range on the way), through
    fwd, a plan and the custom op, against torch fp32 and the library's host reference."""
    kw, dec, d = problem(fmt, page_size=page_size, seed=43)
    gen = torch.Generator(device=DEV).manual_seed(44)
    rope = (torch.randn(d["kv_cache"].shape[0], 64, device=DEV, generator=gen) * rope_std).to(
        torch.bfloat16)
    used = torch.zeros(rope.shape[0], dtype=torch.bool, device=DEV)
    for s_ in dec["slots"]:
        used[torch.as_tensor(np.asarray(s_, np.int64), device=DEV)] = True
    rope[~used] = float("nan")  # slots no element reads
    split = dict(d, kv_cache=d["kv_cache"][:, :512], kpe_cache=rope)
    p = mla.Params(**split)
    assert p.struct.kpe_dtype == mla.DType.BF16 and p.struct.kv_dtype == mla.dtype(fmt)
    want = torch_reference(d, dec["slots"], dec["qo"], dec["kv"], rope=rope)
    d["o"].fill_(float("nan"))
    mla.fwd(p)
    torch.cuda.synchronize()
    assert_close(d["o"], d["lse"], *want)
    host = dict(kw, kv_cache=kw["kv_cache"][:, :512],
                kpe_cache=rope.view(torch.int16).cpu().numpy().view(np.uint16))
    assert_close(d["o"], d["lse"], *host_reference(host))
    with mla.Plan(p) as plan:  # the plan's own kernels: the rope dtype is part of its shape
        ws = torch.empty(max(plan.workspace_size, 1), dtype=torch.uint8, device=DEV)
        d["o"].fill_(float("nan"))
        plan.prepare(p, ws)
        plan.run(p, ws)
        torch.cuda.synchronize()
        assert_close(d["o"], d["lse"], *want)
        with pytest.raises(mla.MlaError) as e:  # 576-wide fp8 rows: another plan's kernels
            plan.run(mla.Params(**d), ws)
        assert e.value.status_name == "MLA_STATUS_INVALID_VALUE" and "rope" in e.value.message
    o, lse = mla.decode(split["q"], split["kv_cache"], d["qo_indptr"], d["kv_indptr"],
                        d["sm_scale"], d["max_q_len"], d["max_kv_len"], kv_dtype=fmt,
                        kv_scale=d["kv_scale"], kpe_cache=rope, kpe_dtype="bf16",
                        kv_page_indptr=d.get("kv_page_indptr"),
                        kv_page_indices=d.get("kv_page_indices"),
                        page_size=d.get("page_size", 0))
    torch.cuda.synchronize()
    assert_close(o, lse, *want)
