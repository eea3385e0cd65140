#!/usr/bin/env python3
"""libmla_decode beside its peers: one process, one run, the SPEC method (docs/SPEC.md, "How a
call is timed"; constants in docs/METHOD.md).

Only figures taken in the same run on the same GPU compare; this script takes them. For each
shape (every batch element the same length) it makes the inputs once: Q and a bf16 cache =
randn * 0.02; the fp8 caches by per-tensor quantization (scale = amax / 448 for e4m3fn, / 240
for e4m3fnuz); the MXFP4 cache by OCP MX quantization (one e8m0 scale per 32 values), with the
e4m3fn cache as V for MXFP4 keys with fp8 values. Then it times

  * torch (always): plain PyTorch on the bf16 cache, what a user writes first: a bf16 matmul
    for the scores, an fp32 softmax, a bf16 matmul for O (the causal mask made once);
  * FlashMLA (when `flash_mla` imports, e.g. built from its commit 9edee0c as docs/METHOD.md
    says): its dense sm90a decode on the same bf16 cache in 64-token pages, its scheduling
    metadata made once outside the timed calls, as an engine shares it across layers;
  * libmla_decode through its Python package (python/, on the C ABI), per cache format: a
    plan made and prepared once outside the timed calls, then Plan.run (the main figure, as
    an engine runs a layer), and the one-shot fwd (planning and metadata included);

each with a 512 MiB buffer zeroed before every call (flushes the L2), CUDA events around the
call, one warm-up call, then --iters timed calls: median (and min / max). Every output is
compared with an fp32 reference on the bf16 cache (so fp8 / MXFP4 errors include the cache's
quantization error).

Prints the medians per shape, our time over each peer's, and geometric means (over the eight
competition shapes, and over every shape timed), and writes every row to --csv.

On the GPU machine (PyTorch and nvcc there):
  cmake --build build --target mla_decode          # build/src/libmla_decode.so
  # optional: FlashMLA built as a Python extension into build/flashmla (docs/METHOD.md)
  python3 bench/compare_peers.py --lib build/src/libmla_decode.so --flashmla build/flashmla
"""
import argparse
import datetime
import math
import os
import statistics
import sys

HEAD_DIM_QK, HEAD_DIM_V = 576, 512
MXFP4_ROW_SCALES = 18
FP8_MAX = {"fp8_e4m3fn": 448.0, "fp8_e4m3fnuz": 240.0}
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # codes 0..7; bit 3 is the sign
FORMATS = ("bf16", "fp8_e4m3fn", "fp8_e4m3fnuz", "mxfp4", "mxfp4_fp8v")
PAGE = 64  # FlashMLA's page size


# ---- shapes --------------------------------------------------------------------------------

class Shape:
    def __init__(self, bs, q_len, kv_len, heads):
        self.bs, self.q_len, self.kv_len, self.heads = bs, q_len, kv_len, heads

    def __str__(self):
        return "bs%d kv%d H%d q%d" % (self.bs, self.kv_len, self.heads, self.q_len)

    def competition(self):
        return self.heads == 16 and self.q_len == 1 and (self.bs, self.kv_len) in [
            (bs, kv) for bs in (4, 32, 64, 256) for kv in (1024, 8192)]


# The eight competition shapes, then engine shapes (those of the 2026-12-01 side-by-side run).
DEFAULT_SHAPES = [Shape(bs, 1, kv, 16) for bs in (4, 32, 64, 256) for kv in (1024, 8192)] + [
    Shape(64, 1, 4096, 128), Shape(32, 1, 8192, 128), Shape(64, 2, 4096, 128),
    Shape(128, 2, 4096, 16), Shape(128, 4, 4096, 16), Shape(8, 1, 32768, 128),
    Shape(1, 1, 65536, 16),
]


def parse_shapes(text):
    shapes = []
    for item in text.split(";"):
        parts = [int(v) for v in item.split(",")]
        if len(parts) != 4 or min(parts) < 1:
            raise ValueError("a shape is bs,q_len,kv_len,heads (got '%s')" % item)
        shapes.append(Shape(*parts))
    return shapes


# ---- caches --------------------------------------------------------------------------------

def quantize_fp8(torch, x, fmt):
    """Per-tensor e4m3fn / e4m3fnuz: (codes as uint8, scale) with value = code * scale."""
    top = FP8_MAX[fmt]
    scale = max(x.abs().max().item() / top, 1e-30)
    codes = (x.float() / scale).clamp(-top, top).to(getattr(torch, fmt.replace("fp8", "float8")))
    return codes.view(torch.uint8), scale


def quantize_mxfp4(torch, x):
    """OCP MX: (packed e2m1 (tokens, 288) uint8, e8m0 scales (tokens, 18) uint8).

    Per block of 32 values the scale is 2^(floor(log2(amax)) - 2) (e2m1's largest exponent),
    the elements are rounded to the nearest e2m1 value (a tie to the smaller magnitude; any
    rounding serves a benchmark) and saturate at 6; low nibble = even index."""
    tokens = x.shape[0]
    blocks = x.float().reshape(tokens, MXFP4_ROW_SCALES, 32)
    amax = blocks.abs().amax(dim=-1, keepdim=True).clamp_min(2.0 ** -127)
    exp = (torch.floor(torch.log2(amax)) - 2).clamp(-127, 127)
    scaled = blocks / torch.exp2(exp)
    del blocks
    # midpoints between neighbouring e2m1 magnitudes: bucketize gives the nearest code
    mids = torch.tensor([(a + b) / 2 for a, b in zip(E2M1_VALUES, E2M1_VALUES[1:])],
                        device=x.device)
    code = torch.bucketize(scaled.abs(), mids).to(torch.uint8)
    code |= (scaled < 0).to(torch.uint8) << 3
    code = code.reshape(tokens, HEAD_DIM_QK)
    packed = (code[:, 0::2] | (code[:, 1::2] << 4)).contiguous()
    scales = (exp.reshape(tokens, MXFP4_ROW_SCALES) + 127).to(torch.uint8).contiguous()
    return packed, scales


def cache_arguments(torch, fmt, flat, quantized):
    """mla_decode.Params keywords of the cache of `fmt` made from the bf16 rows `flat`
    (tokens, 576); quantized caches the codes per format (the fp8 V of mxfp4_fp8v is the
    e4m3fn cache)."""
    def codes(f):
        if f not in quantized:
            quantized[f] = (quantize_mxfp4 if f == "mxfp4" else
                            lambda t, x: quantize_fp8(t, x, f))(torch, flat)
        return quantized[f]

    if fmt == "bf16":
        return dict(kv_cache=flat)
    if fmt in FP8_MAX:
        cache, scale = codes(fmt)
        return dict(kv_cache=cache, kv_dtype=fmt, kv_scale=scale)
    packed, scales = codes("mxfp4")
    args = dict(kv_cache=packed, kv_dtype="mxfp4", kv_block_scales=scales)
    if fmt == "mxfp4_fp8v":
        v, v_scale = codes("fp8_e4m3fn")
        args.update(v_cache=v, v_dtype="fp8_e4m3fn", v_scale=v_scale)
    return args


# ---- timing and checking -------------------------------------------------------------------

class Timer:
    def __init__(self, torch, iters):
        self.torch = torch
        self.iters = iters
        self.flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def time(self, call):
        """One warm-up call, then iters calls each after an L2 flush; (median, min, max) us."""
        call()
        self.torch.cuda.synchronize()
        us = []
        for _ in range(self.iters):
            self.flush.zero_()
            self.start.record()
            call()
            self.stop.record()
            self.stop.synchronize()
            us.append(self.start.elapsed_time(self.stop) * 1e3)
        return statistics.median(us), min(us), max(us)


def causal_mask(torch, shape, device):
    """(q_len * heads, kv_len) True where query row (token t, head h) may not look, or None."""
    if shape.q_len == 1:
        return None
    pos = torch.arange(shape.kv_len, device=device)
    last = shape.kv_len - shape.q_len + torch.arange(shape.q_len, device=device)
    return (pos[None, :] > last[:, None]).repeat_interleave(shape.heads, dim=0)


def attention(torch, q, k, shape, scale, mask, naive):
    """O (bs, q_len * heads, 512) on dense K (bs, kv_len, 576): fp32 throughout (the reference),
    or naive: bf16 matmuls around an fp32 softmax (the torch peer)."""
    rows = q.reshape(shape.bs, shape.q_len * shape.heads, HEAD_DIM_QK)
    if not naive:
        rows, k = rows.float(), k.float()
    s = torch.bmm(rows, k.transpose(1, 2)).float() * scale
    if mask is not None:
        s = s.masked_fill(mask[None], float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.bmm(p.to(k.dtype), k[:, :, :HEAD_DIM_V])


def max_abs_err(out, ref):
    return (out.float().reshape(ref.shape) - ref).abs().max().item()


# ---- the implementations -------------------------------------------------------------------

def run_torch(torch, timer, shape, q, kv, scale, mask, ref):
    out = []
    t = timer.time(lambda: out.__setitem__(slice(None), [attention(torch, q, kv, shape, scale,
                                                                   mask, naive=True)]))
    return [("torch", "bf16", t, max_abs_err(out[0], ref), "")]


def run_flashmla(torch, flash_mla, timer, shape, q, kv, scale, ref):
    """FlashMLA on the same bf16 cache, as 64-token pages in order (the same bytes; a length
    that is not a multiple of 64 ends in a partial page, its tail never read)."""
    bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
    pages = -(-kv_len // PAGE)
    if kv_len % PAGE:
        padded = torch.zeros(bs, pages * PAGE, HEAD_DIM_QK, device=kv.device, dtype=kv.dtype)
        padded[:, :kv_len] = kv
        kv = padded
    blocked = kv.reshape(bs * pages, PAGE, 1, HEAD_DIM_QK)
    table = torch.arange(bs * pages, device=q.device, dtype=torch.int32).reshape(bs, pages)
    seqlens = torch.full((bs,), kv_len, device=q.device, dtype=torch.int32)
    meta, splits = flash_mla.get_mla_metadata(seqlens, q_len * heads, 1)
    q4 = q.reshape(bs, q_len, heads, HEAD_DIM_QK)
    out = []

    def call():
        out[:] = [flash_mla.flash_mla_with_kvcache(q4, blocked, table, seqlens, HEAD_DIM_V, meta,
                                                   splits, softmax_scale=scale, causal=True)[0]]

    t = timer.time(call)
    return [("FlashMLA", "bf16", t, max_abs_err(out[0], ref), "page 64")]


def run_ours(torch, mla, timer, fmt, shape, q, cache, scale, ref):
    """libmla_decode on a contiguous cache of `fmt`: rows for Plan.run and the one-shot fwd."""
    bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
    o = torch.empty(bs * q_len, heads, HEAD_DIM_V, device=q.device, dtype=torch.bfloat16)
    lse = torch.empty(bs * q_len, heads, device=q.device, dtype=torch.float32)
    qo = torch.arange(0, bs + 1, device=q.device, dtype=torch.int32) * q_len
    kvp = torch.arange(0, bs + 1, device=q.device, dtype=torch.int32) * kv_len
    p = mla.Params(q, qo_indptr=qo, kv_indptr=kvp, o=o, lse=lse, sm_scale=scale,
                   max_q_len=q_len, max_kv_len=kv_len, **cache)
    rows = []
    with mla.Plan(p) as plan:
        ws = torch.empty(plan.workspace_size, dtype=torch.uint8, device=q.device)
        plan.prepare(p, ws)
        fwd_ws = torch.empty(mla.workspace_size(p), dtype=torch.uint8, device=q.device)
        for impl, call in (("libmla_decode", lambda: plan.run(p, ws)),
                           ("libmla_decode fwd", lambda: mla.fwd(p, fwd_ws))):
            o.fill_(float("nan"))
            t = timer.time(call)
            rows.append((impl, fmt, t, max_abs_err(o, ref), plan.describe()))
    return rows


# ---- report --------------------------------------------------------------------------------

def geomean(values):
    values = [v for v in values if v is not None]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def table(title, header, rows):
    """Print a plain text table: rows of (label, values...), None printed as '-'."""
    cells = [[label] + ["-" if v is None else "%.2f" % v for v in values]
             for label, *values in rows]
    widths = [max(len(str(c[i])) for c in [header] + cells) for i in range(len(header))]
    print("\n" + title)
    for line in [header] + cells:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(line, widths))))


def report(shapes, medians, formats, peers):
    """Tables of the medians (medians[(str(shape), impl, format)] = us) and of our time over
    each peer's, with geometric means over the competition shapes and over every shape."""
    ours = [("libmla_decode", f) for f in formats]
    groups = [(label, group) for label, group in (
        ("geomean, competition", [s for s in shapes if s.competition()]),
        ("geomean, all shapes", shapes)) if group]

    def show(title, columns, value):  # value(shape, column): a number or None
        rows = [[str(s)] + [value(s, c) for c in columns] for s in shapes]
        rows += [[label] + [geomean([value(s, c) for s in group]) for c in columns]
                 for label, group in groups]
        table(title, ["shape"] + ["%s %s" % c for c in columns], rows)

    def median(s, c):
        return medians.get((str(s),) + c)

    show("median us (libmla_decode: Plan.run)", [(p, "bf16") for p in peers] + ours, median)
    for peer in peers:
        def ratio(s, c, peer=peer):
            mine, theirs = median(s, c), median(s, (peer, "bf16"))
            return mine / theirs if mine and theirs else None
        show("libmla_decode / %s bf16 (below 1: libmla_decode is faster)" % peer, ours, ratio)


# ---- main ----------------------------------------------------------------------------------

def import_binding(lib):
    """mla_decode, from the installed package or this checkout's python/."""
    try:
        import mla_decode
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "python"))
        import mla_decode
    if lib:
        mla_decode.load_library(os.path.abspath(lib))
    return mla_decode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default="",
                    help="libmla_decode shared library (default: MLA_DECODE_LIBRARY, next to "
                         "the package, or the loader path)")
    ap.add_argument("--flashmla", default="",
                    help="folder holding the built flash_mla package (default: import it from "
                         "the path as it is, and leave FlashMLA out if it does not import)")
    ap.add_argument("--no-flashmla", action="store_true", help="leave FlashMLA out")
    ap.add_argument("--formats", default=",".join(FORMATS),
                    help="libmla_decode cache formats, of: " + ", ".join(FORMATS))
    ap.add_argument("--shapes", default="",
                    help="'bs,q_len,kv_len,heads;...' (default: the eight competition shapes, "
                         "then seven engine shapes)")
    ap.add_argument("--iters", type=int, default=30, help="timed calls per case (>= 30)")
    ap.add_argument("--csv", default="compare_peers.csv", help="where the rows go")
    args = ap.parse_args()

    import torch  # here, so that --help works without it
    formats = [f for f in args.formats.split(",") if f]
    for f in formats:
        if f not in FORMATS:
            ap.error("no format '%s' (have %s)" % (f, ", ".join(FORMATS)))
    shapes = parse_shapes(args.shapes) if args.shapes else DEFAULT_SHAPES
    mla = import_binding(args.lib)
    flash_mla, flash_note = None, "left out (--no-flashmla)"
    if not args.no_flashmla:
        if args.flashmla:
            sys.path.insert(0, os.path.abspath(args.flashmla))
        try:
            import flash_mla
            flash_note = "flash_mla from %s" % os.path.dirname(flash_mla.__file__)
        except ImportError as e:
            flash_note = "left out: %s" % e
    peers = ["torch"] + (["FlashMLA"] if flash_mla else [])

    date = datetime.date.today().isoformat()
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    device = "%s (%d SMs)" % (props.name, props.multi_processor_count)
    print("# %s, %s; torch %s (CUDA %s, HIP %s); libmla_decode %s (backend %s); FlashMLA: %s" %
          (date, device, torch.__version__, torch.version.cuda, getattr(torch.version, "hip",
                                                                         None), mla.version(),
           mla.backend(), flash_note))
    print("# %d calls per case after one warm-up, a 512 MiB flush before each, CUDA events, "
          "median; libmla_decode through its Python package" % args.iters)

    scale = 1.0 / math.sqrt(HEAD_DIM_QK)
    timer = Timer(torch, args.iters)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261201)
    medians = {}
    with open(args.csv, "w") as out:
        out.write("date,device,bs,q_len,kv_len,heads,impl,kv_format,median_us,min_us,max_us,"
                  "max_abs_err_vs_fp32_ref_on_bf16_cache,plan\n")
        for shape in shapes:
            bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
            q = (torch.randn(bs * q_len, heads, HEAD_DIM_QK, device="cuda", generator=gen)
                 * 0.02).to(torch.bfloat16)
            kv = (torch.randn(bs, kv_len, HEAD_DIM_QK, device="cuda", generator=gen)
                  * 0.02).to(torch.bfloat16)
            mask = causal_mask(torch, shape, q.device)
            ref = attention(torch, q, kv, shape, scale, mask, naive=False)
            rows = run_torch(torch, timer, shape, q, kv, scale, mask, ref)
            if flash_mla is not None:
                rows += run_flashmla(torch, flash_mla, timer, shape, q, kv, scale, ref)
            quantized = {}
            for fmt in formats:
                cache = cache_arguments(torch, fmt, kv.reshape(bs * kv_len, HEAD_DIM_QK),
                                        quantized)
                rows += run_ours(torch, mla, timer, fmt, shape, q, cache, scale, ref)
            for impl, fmt, (med, lo, hi), err, plan in rows:
                medians[(str(shape), impl, fmt)] = med
                out.write('%s,"%s",%d,%d,%d,%d,%s,%s,%.2f,%.2f,%.2f,%.2e,"%s"\n' % (
                    date, device, bs, q_len, kv_len, heads, impl, fmt, med, lo, hi, err,
                    plan.replace('"', '""')))
                print("%-22s %-18s %-13s %9.2f us  err %.1e  %s" % (shape, impl, fmt, med, err,
                                                                    plan))
            out.flush()
            sys.stdout.flush()
            del q, kv, ref, quantized, mask
            torch.cuda.empty_cache()
    report(shapes, medians, formats, peers)
    print("\nrows written to %s" % args.csv)


if __name__ == "__main__":
    main()
