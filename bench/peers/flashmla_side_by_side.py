#!/usr/bin/env python3
"""FlashMLA and libmla_decode timed side by side: one process, one run, the SPEC method.

Only figures taken in the same run on the same GPU compare (docs/METHOD.md); this script
takes them. For each shape (every batch element the same length) it makes the inputs once
(Q and a bf16 cache = randn * 0.02; the fp8 cache by per-tensor e4m3fn quantization, scale =
amax / 448; the MXFP4 cache by OCP MX quantization, one e8m0 scale per 32 values), then times

  * FlashMLA (dense sm90a decode, bf16 cache in 64-token pages; its scheduling metadata made
    once outside the timed calls, as an engine shares it across layers), and
  * libmla_decode through its C ABI (ctypes on libmla_decode.so): a plan made and prepared
    once outside the timed calls, then mla_decode_plan_run; also the one-shot mla_decode_fwd,

each with: a 512 MiB buffer zeroed before every call (flushes the L2), CUDA events around the
call, one warm-up call, then --iters timed calls, median (and min / max). Every output is
compared with an fp32 reference on the bf16 cache (so fp8 / MXFP4 rows include the cache's
quantization error). Prints CSV on stdout.

On the GPU machine (PyTorch and nvcc there; no network):
  bench/run.sh --benchmark_filter=NONE                   # configures and builds build/
  cmake --build build --target mla_decode                # build/src/libmla_decode.so
  # FlashMLA commit 9edee0c built as a Python extension into build/flashmla (docs/METHOD.md,
  # "Taking the figures again")
  python3 bench/peers/flashmla_side_by_side.py --lib build/src/libmla_decode.so \\
      --flashmla build/flashmla > side_by_side.csv

Needs only torch and ctypes. The ctypes mirror of mla_decode_params below must match
include/mla_decode.h field for field (checked against a C compiler's sizeof / offsetof).
"""
import argparse
import ctypes
import math
import os
import statistics
import sys

# ---- the C ABI (include/mla_decode.h) --------------------------------------------------------

MLA_STATUS_SUCCESS = 0
MLA_DTYPE_BF16 = 1
MLA_DTYPE_FP32 = 2
MLA_DTYPE_FP8_E4M3FN = 3
MLA_DTYPE_FP8_E4M3FNUZ = 4
MLA_DTYPE_MXFP4 = 5
HEAD_DIM_QK = 576
HEAD_DIM_V = 512
MXFP4_ROW_BYTES = 288
MXFP4_ROW_SCALES = 18

_mla_dtype = ctypes.c_int  # a C enum: int-sized with the C compilers we build with


class MlaDecodeParams(ctypes.Structure):
    """mla_decode_params, in the header's order (ctypes applies the C alignment rules)."""

    _fields_ = [
        # problem size
        ("batch_size", ctypes.c_int32),
        ("total_q", ctypes.c_int32),
        ("max_q_len", ctypes.c_int32),
        ("max_kv_len", ctypes.c_int32),
        ("num_heads", ctypes.c_int32),
        ("head_dim_qk", ctypes.c_int32),
        ("head_dim_v", ctypes.c_int32),
        ("sm_scale", ctypes.c_float),
        # query
        ("q", ctypes.c_void_p),
        ("q_dtype", _mla_dtype),
        ("q_scale", ctypes.c_float),
        ("q_stride_token", ctypes.c_int64),
        ("q_stride_head", ctypes.c_int64),
        # latent cache
        ("kv_cache", ctypes.c_void_p),
        ("kv_dtype", _mla_dtype),
        ("kv_scale", ctypes.c_float),
        ("kv_stride_slot", ctypes.c_int64),
        ("kv_block_scales", ctypes.c_void_p),
        ("kv_block_scale_stride", ctypes.c_int64),
        ("v_cache", ctypes.c_void_p),
        ("v_dtype", _mla_dtype),
        ("v_scale", ctypes.c_float),
        ("v_stride_slot", ctypes.c_int64),
        ("num_slots", ctypes.c_int64),
        ("kv_page_indptr", ctypes.c_void_p),
        ("kv_page_indices", ctypes.c_void_p),
        ("page_size", ctypes.c_int32),
        # batch layout
        ("qo_indptr", ctypes.c_void_p),
        ("kv_indptr", ctypes.c_void_p),
        # outputs
        ("o", ctypes.c_void_p),
        ("o_dtype", _mla_dtype),
        ("o_stride_token", ctypes.c_int64),
        ("o_stride_head", ctypes.c_int64),
        ("lse", ctypes.c_void_p),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class Library:
    """The few entry points of libmla_decode this script calls."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        status_fns = {
            "mla_decode_params_init": [ctypes.POINTER(MlaDecodeParams)],
            "mla_decode_plan_create": [ctypes.POINTER(MlaDecodeParams),
                                       ctypes.POINTER(ctypes.c_void_p)],
            "mla_decode_plan_destroy": [ctypes.c_void_p],
            "mla_decode_plan_workspace_size": [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)],
            "mla_decode_plan_describe": [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t],
            "mla_decode_plan_prepare": [ctypes.c_void_p, ctypes.POINTER(MlaDecodeParams),
                                        ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p],
            "mla_decode_plan_run": [ctypes.c_void_p, ctypes.POINTER(MlaDecodeParams),
                                    ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p],
            "mla_decode_fwd": [ctypes.POINTER(MlaDecodeParams), ctypes.c_void_p,
                               ctypes.c_size_t, ctypes.c_void_p],
        }
        for name, args in status_fns.items():
            fn = getattr(lib, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int
        for name in ("mla_version_string", "mla_backend_name", "mla_last_error_message"):
            getattr(lib, name).argtypes = []
            getattr(lib, name).restype = ctypes.c_char_p
        lib.mla_status_string.argtypes = [ctypes.c_int]
        lib.mla_status_string.restype = ctypes.c_char_p
        self.lib = lib

    def check(self, status, what):
        if status != MLA_STATUS_SUCCESS:
            raise RuntimeError("%s: %s: %s" % (what, self.lib.mla_status_string(status).decode(),
                                               self.lib.mla_last_error_message().decode()))

    def version(self):
        return self.lib.mla_version_string().decode()

    def backend(self):
        return self.lib.mla_backend_name().decode()


# ---- inputs ----------------------------------------------------------------------------------

FORMATS = ("bf16", "fp8_e4m3fn", "mxfp4")
E4M3FN_MAX = 448.0
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # codes 0..7; bit 3 is the sign


def quantize_fp8(torch, x):
    """Per-tensor e4m3fn: (codes as uint8 (..., 576), scale) with value = code * scale."""
    scale = max(x.abs().max().item() / E4M3FN_MAX, 1e-30)
    codes = (x.float() / scale).clamp(-E4M3FN_MAX, E4M3FN_MAX).to(torch.float8_e4m3fn)
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


class Shape:
    def __init__(self, bs, q_len, kv_len, heads):
        self.bs, self.q_len, self.kv_len, self.heads = bs, q_len, kv_len, heads

    def __str__(self):
        return "bs%d q%d kv%d h%d" % (self.bs, self.q_len, self.kv_len, self.heads)


# The eight competition shapes, then the engine shapes of the 2026-12-01 side-by-side run.
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


# ---- timing (SPEC method) --------------------------------------------------------------------

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


def reference(torch, q, k, shape, scale):
    """fp32 O (bs, q_len, heads, 512) of the causal decode on dense K (bs, kv_len, 576)."""
    bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
    qf = q.float().reshape(bs, q_len * heads, HEAD_DIM_QK)
    kf = k.float()
    s = torch.bmm(qf, kf.transpose(1, 2)) * scale                   # (bs, q_len*heads, kv)
    if q_len > 1:  # query i sees cache positions 0 .. kv_len - q_len + i
        pos = torch.arange(kv_len, device=q.device)
        last = kv_len - q_len + torch.arange(q_len, device=q.device)
        mask = pos[None, :] > last[:, None]                          # (q_len, kv)
        s = s.masked_fill(mask.repeat_interleave(heads, dim=0)[None], float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.bmm(p, kf[:, :, :HEAD_DIM_V]).reshape(bs, q_len, heads, HEAD_DIM_V)


def max_abs_err(out, ref):
    return (out.float().reshape(ref.shape) - ref).abs().max().item()


# ---- one shape -------------------------------------------------------------------------------

def make_params(torch, lib, fmt, shape, q, kv_bf16, scale, o):
    """mla_decode_params of a contiguous cache of `fmt` made from kv_bf16 (bs, kv_len, 576),
    Q and O as given (device tensors for the GPU; host tensors serve mla_decode_reference).
    Returns (params, tensors the params point into: keep them alive)."""
    bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
    tokens = bs * kv_len
    p = MlaDecodeParams()
    lib.check(lib.lib.mla_decode_params_init(ctypes.byref(p)), "params_init")
    p.batch_size, p.total_q, p.max_q_len, p.max_kv_len = bs, bs * q_len, q_len, kv_len
    p.num_heads, p.sm_scale = heads, scale
    p.q, p.q_dtype, p.q_scale = q.data_ptr(), MLA_DTYPE_BF16, 1.0
    p.q_stride_head, p.q_stride_token = HEAD_DIM_QK, heads * HEAD_DIM_QK
    flat = kv_bf16.reshape(tokens, HEAD_DIM_QK)
    keep = []
    if fmt == "bf16":
        cache, p.kv_dtype, p.kv_stride_slot = flat, MLA_DTYPE_BF16, HEAD_DIM_QK
    elif fmt == "fp8_e4m3fn":
        cache, kv_scale = quantize_fp8(torch, flat)
        p.kv_dtype, p.kv_scale, p.kv_stride_slot = MLA_DTYPE_FP8_E4M3FN, kv_scale, HEAD_DIM_QK
    elif fmt == "mxfp4":
        cache, scales = quantize_mxfp4(torch, flat)
        keep.append(scales)
        p.kv_dtype, p.kv_stride_slot = MLA_DTYPE_MXFP4, MXFP4_ROW_BYTES
        p.kv_block_scales, p.kv_block_scale_stride = scales.data_ptr(), MXFP4_ROW_SCALES
    else:
        raise ValueError("no format '%s'" % fmt)
    p.kv_cache, p.num_slots, p.page_size = cache.data_ptr(), tokens, 1
    qo = torch.arange(0, bs + 1, device=q.device, dtype=torch.int32) * q_len
    kvp = torch.arange(0, bs + 1, device=q.device, dtype=torch.int32) * kv_len
    p.qo_indptr, p.kv_indptr = qo.data_ptr(), kvp.data_ptr()
    p.o, p.o_dtype = o.data_ptr(), MLA_DTYPE_BF16
    p.o_stride_head, p.o_stride_token = HEAD_DIM_V, heads * HEAD_DIM_V
    return p, keep + [cache, qo, kvp]


def run_ours(torch, lib, timer, fmt, shape, q, kv_bf16, scale, ref, stream):
    """libmla_decode on a contiguous cache of `fmt`: rows for plan_run and fwd."""
    o = torch.empty(shape.bs * shape.q_len, shape.heads, HEAD_DIM_V, device=q.device,
                    dtype=torch.bfloat16)
    p, keep = make_params(torch, lib, fmt, shape, q, kv_bf16, scale, o)
    plan = ctypes.c_void_p()
    lib.check(lib.lib.mla_decode_plan_create(ctypes.byref(p), ctypes.byref(plan)), "plan_create")
    try:
        ws_bytes = ctypes.c_size_t()
        lib.check(lib.lib.mla_decode_plan_workspace_size(plan, ctypes.byref(ws_bytes)),
                  "plan_workspace_size")
        ws = torch.empty(max(ws_bytes.value, 1), dtype=torch.uint8, device=q.device)
        text = ctypes.create_string_buffer(512)
        lib.check(lib.lib.mla_decode_plan_describe(plan, text, len(text)), "plan_describe")
        ws_ptr = ctypes.c_void_p(ws.data_ptr())
        lib.check(lib.lib.mla_decode_plan_prepare(plan, ctypes.byref(p), ws_ptr, ws_bytes, stream),
                  "plan_prepare")

        def plan_run():
            lib.check(lib.lib.mla_decode_plan_run(plan, ctypes.byref(p), ws_ptr, ws_bytes, stream),
                      "plan_run")

        def fwd():
            lib.check(lib.lib.mla_decode_fwd(ctypes.byref(p), ws_ptr, ws_bytes, stream), "fwd")

        rows = []
        for impl, call in (("plan_run", plan_run), ("fwd (one-shot)", fwd)):
            o.fill_(float("nan"))
            t = timer.time(call)
            torch.cuda.synchronize()
            rows.append(("libmla_decode %s %s" % (lib.version(), impl), fmt, t,
                         max_abs_err(o, ref), text.value.decode()))
        del keep  # the tensors the params point into lived until here
        return rows
    finally:
        lib.lib.mla_decode_plan_destroy(plan)


def run_flashmla(torch, flash_mla, timer, shape, q, kv_bf16, scale, ref):
    """FlashMLA on the same bf16 cache, as 64-token pages in order (the same bytes)."""
    bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
    page = 64
    if kv_len % page:
        return []
    pages = kv_len // page
    blocked = kv_bf16.reshape(bs * pages, page, 1, HEAD_DIM_QK)
    table = torch.arange(bs * pages, device=q.device, dtype=torch.int32).reshape(bs, pages)
    seqlens = torch.full((bs,), kv_len, device=q.device, dtype=torch.int32)
    meta, splits = flash_mla.get_mla_metadata(seqlens, q_len * heads, 1)
    q4 = q.reshape(bs, q_len, heads, HEAD_DIM_QK)
    out = []

    def call():
        out[:] = [flash_mla.flash_mla_with_kvcache(q4, blocked, table, seqlens, HEAD_DIM_V, meta,
                                                   splits, softmax_scale=scale, causal=True)[0]]

    t = timer.time(call)
    torch.cuda.synchronize()
    return [("FlashMLA (page 64)", "bf16", t, max_abs_err(out[0], ref), "")]


# ---- main ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default="build/src/libmla_decode.so", help="libmla_decode.so")
    ap.add_argument("--flashmla", default="",
                    help="directory holding the built flash_mla package (build_flashmla.sh); "
                         "empty = import it from the path as it is")
    ap.add_argument("--no-flashmla", action="store_true", help="time libmla_decode only")
    ap.add_argument("--formats", default="bf16,fp8_e4m3fn,mxfp4",
                    help="libmla_decode cache formats, of: " + ", ".join(FORMATS))
    ap.add_argument("--shapes", default="",
                    help="'bs,q_len,kv_len,heads;...' (default: the competition and engine "
                         "shapes of the 2026-12-01 run)")
    ap.add_argument("--iters", type=int, default=30, help="timed calls per case (>= 30)")
    args = ap.parse_args()

    import torch  # only here: the ABI mirror above must be importable without it
    formats = [f for f in args.formats.split(",") if f]
    for f in formats:
        if f not in FORMATS:
            ap.error("no format '%s' (have %s)" % (f, ", ".join(FORMATS)))
    shapes = parse_shapes(args.shapes) if args.shapes else DEFAULT_SHAPES
    lib = Library(os.path.abspath(args.lib))
    flash_mla = None
    if not args.no_flashmla:
        if args.flashmla:
            sys.path.insert(0, os.path.abspath(args.flashmla))
        import flash_mla  # noqa: E402 (needs the path above)

    scale = 1.0 / math.sqrt(HEAD_DIM_QK)
    timer = Timer(torch, args.iters)
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    print("# %s; libmla_decode %s (backend %s); torch %s; %d calls per case after one warm-up, "
          "512 MiB flush before each, CUDA events, median" %
          (torch.cuda.get_device_name(), lib.version(), lib.backend(), torch.__version__,
           args.iters))
    print("bs,q_len,kv_len,heads,impl,kv_format,median_us,min_us,max_us,"
          "max_abs_err_vs_fp32_ref_on_bf16_cache,plan")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261201)
    for shape in shapes:
        bs, q_len, kv_len, heads = shape.bs, shape.q_len, shape.kv_len, shape.heads
        q = (torch.randn(bs * q_len, heads, HEAD_DIM_QK, device="cuda", generator=gen)
             * 0.02).to(torch.bfloat16)
        kv = (torch.randn(bs, kv_len, HEAD_DIM_QK, device="cuda", generator=gen)
              * 0.02).to(torch.bfloat16)
        ref = reference(torch, q, kv, shape, scale)
        rows = []
        if flash_mla is not None:
            rows += run_flashmla(torch, flash_mla, timer, shape, q, kv, scale, ref)
        for fmt in formats:
            rows += run_ours(torch, lib, timer, fmt, shape, q, kv, scale, ref, stream)
        for impl, fmt, (med, lo, hi), err, plan in rows:
            plan = '"%s"' % plan.replace('"', '""') if plan else ""
            print("%d,%d,%d,%d,%s,%s,%.2f,%.2f,%.2f,%.2e,%s" %
                  (bs, q_len, kv_len, heads, impl, fmt, med, lo, hi, err, plan))
        sys.stdout.flush()
        del q, kv, ref
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
