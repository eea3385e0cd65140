# Host model of the split-KV reduce's order of sums (kernels/splitkv/reduce.h, launch_reduce in
# kernels/splitkv/instantiations/reduce.hip), from the review of 32b6710 / c86bb30.
#
# Run: /usr/bin/python3 reduce_order_model.py [random_cases] [seed]   (numpy: Debian python3-numpy)
#
# What it models, per (row, head), for warp sizes 32 (NVIDIA) and 64 (AMD):
#   reduce_kernel<k>, k in 1,2,4, and reduce_split_parallel_kernel<g>, g in 1,2,4, as coded: the
#   LSE loads per lane (lse_r[k][lane] = split lane + k*W), max_keep_nan and the xor butterfly,
#   the weight shuffle w = shfl(w_r[(g*32)/W], rel % W), the rounds of 32g splits with the LSE
#   reload, add_splits / add_partial in the kernels' order, reduce_store (1/wsum, acc*inv, LSE).
#   The 512 dims are a vector: every lane does the same sequence on its own 4 dims, so one
#   vector op stands for the same op on every (slice, lane, component).
# Arithmetic: float32 everywhere; exp2 / log2 are numpy float32 (ex2.approx / lg2.approx on the
#   GPU: the same function in every kernel, so identity does not depend on it). ASSUMPTION:
#   `acc += w * x` is contracted to an fma (nvcc -fmad=true default; clang's HIP default
#   contracts too), modelled as float64 w*x + acc (w*x exact in float64) rounded once to float32
#   (a double rounding; a true fma can differ in a last bit, in every kernel alike).
# Checks, on every split count 1..300 and random cases (LSEs with -inf, underflowing weights,
#   occasional NaN; partial O of -inf splits and of splits past the element's last are NaN, so a
#   read of an unwritten row shows): every kernel that can hold the element (each with
#   max_splits = the element's count, and with a larger max_splits that launch_reduce would give
#   it that kernel for) returns bitwise the same O (fp32, before bf16 packing), weight sum and
#   LSE (NaNs compared as NaN: the GPU's are canonical); the result is close to a float64
#   reference; NaN and all--inf rows give the documented outputs. Also: launch_reduce's choice
#   is never refused by launch_reduce_with, and the shared-memory hand-over fits
#   kReduceCombineBytes. Prints how often the plain split-order sum (the old kernel) differs
#   bitwise, i.e. whether a bitwise test can see a change of order.
import sys
import numpy as np

f32, f64 = np.float32, np.float64
NEG_INF = f32(-np.inf)
LN2 = f32(0.6931471805599453)
CHUNK, PARTS, GROUP = 8, 4, 32  # kReduceChunk, kReduceParts, kReduceGroupSplits
D = 512


def counts(v):  # softmax_counts: !(v <= 0)
    return not (v <= 0)


def max_keep_nan(a, b):  # elementwise on arrays
    return np.where((a > b) | (a != a), a, b).astype(f32)


def warp_max(m, W):
    for mask in [W >> i for i in range(1, W.bit_length()) if W >> i]:
        m = max_keep_nan(m, m[np.arange(W) ^ mask])
    return m


def weight(lse, m):  # split_weight, elementwise
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(lse == NEG_INF, f32(0), np.exp2((lse - m).astype(f32))).astype(f32)


def fma(w, x, acc):
    return (f64(w) * x.astype(f64) + acc.astype(f64)).astype(f32)


def add_split(acc, wsum, w, x):  # one split of add_splits (only if it counts)
    return fma(w, x, acc), f32(wsum + w)


def add_partial(acc, wsum, pa, pw):
    if counts(pw):
        return (acc + pa).astype(f32), f32(wsum + pw)
    return acc, wsum


def store(m, acc, wsum):
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        inv = f32(1) / wsum if counts(wsum) else f32(0)
        o = (acc * inv).astype(f32)
        lse = f32(f32(m + np.log2(wsum)) * LN2) if counts(wsum) else NEG_INF
    return o, wsum, lse


def load(o, s, M):  # a partial O row, read only where the weight counts
    assert 0 <= s < M, "read past max_splits"
    return o[s]


def reduce_kernel(k, W, lse, o):
    M, ks = len(lse), k * CHUNK
    assert M <= ks
    lane = np.arange(W)
    lse_l = np.array([lse[l] if l < M and l < ks else NEG_INF for l in lane], f32)
    m = warp_max(lse_l, W)[0]
    acc = [np.zeros(D, f32) for _ in range(k)]
    wsum = [f32(0)] * k
    if m != NEG_INF:
        w_l = weight(lse_l, m)
        for c in range(k):
            for i in range(CHUNK):
                j = c * CHUNK + i
                w = w_l[j]  # shfl(w_lane, j)
                if counts(w):
                    acc[c], wsum[c] = add_split(acc[c], wsum[c], w, load(o, j, M))
    a, ws = acc[0], wsum[0]
    for c in range(1, k):
        a, ws = add_partial(a, ws, acc[c], wsum[c])
    return store(m, a, ws)


def split_parallel_kernel(G, W, lse, o):
    M = len(lse)
    if G < 4:
        assert M <= G * GROUP
    round_splits = G * GROUP
    regs = (round_splits + W - 1) // W
    lane = np.arange(W)

    def lse_regs(base):
        return np.array([[lse[s] if s < M else NEG_INF for s in base + lane + r * W]
                         for r in range(regs)], f32)

    parts = []
    for q in range(PARTS):  # each warp computes m itself
        lse_r = lse_regs(0)
        ml = lse_r[0]
        for r in range(1, regs):
            ml = max_keep_nan(ml, lse_r[r])
        if G == 4:
            ml = ml.copy()
            for l in lane:
                for s in range(l + round_splits, M, W):
                    ml[l] = max_keep_nan(ml[l], lse[s])
        m = warp_max(ml, W)[0]
        acc, wsum = np.zeros(D, f32), f32(0)
        if m != NEG_INF:
            for base in range(0, M, round_splits):
                if base > 0:
                    lse_r = lse_regs(base)
                w_r = weight(lse_r, m)
                for g in range(G):
                    for i in range(CHUNK):
                        rel = g * GROUP + q * CHUNK + i
                        w = w_r[(g * GROUP) // W][rel % W]
                        if counts(w):
                            acc, wsum = add_split(acc, wsum, w, load(o, base + rel, M))
        parts.append((m, acc, wsum))
    m, acc, wsum = parts[0]
    assert all(p[0] == m or (p[0] != p[0] and m != m) for p in parts)
    for r in range(1, PARTS):
        acc, wsum = add_partial(acc, wsum, parts[r][1], parts[r][2])
    return store(m, acc, wsum)


def sequential(lse, o):  # the old kernel's order: every split in turn (for the "visible" count)
    m = lse[0]
    for x in lse[1:]:
        m = max_keep_nan(np.array(m), np.array(x))[()]
    acc, wsum = np.zeros(D, f32), f32(0)
    if m != NEG_INF:
        for s, w in enumerate(weight(lse, m)):
            if counts(w):
                acc, wsum = add_split(acc, wsum, w, o[s])
    return store(m, acc, wsum)


# ---- launch_reduce (reduce.hip) -----------------------------------------------------------
def launch(M, rows, W):
    slices = D // (4 * W)
    spread = M > GROUP or (M > CHUNK and rows * slices <= 512)
    if M <= CHUNK:
        kind = ("rk", 1)
    elif not spread:
        kind = ("rk", 2) if M <= 2 * CHUNK else ("rk", 4)
    else:
        kind = ("sp", 1) if M <= GROUP else ("sp", 2) if M <= 2 * GROUP else ("sp", 4)
    sp, n = kind[0] == "sp", kind[1]
    served = n * CHUNK if not sp else (n * GROUP if n < 4 else M)
    assert M <= served and spread == sp, ("refused", M, rows, W, kind)
    return kind


def cap(kind):
    return {"rk": CHUNK, "sp": GROUP}[kind[0]] * kind[1] if kind != ("sp", 4) else 10**9


def run_kernel(kind, W, lse, o):
    return (reduce_kernel if kind[0] == "rk" else split_parallel_kernel)(kind[1], W, lse, o)


def key(res):
    o, wsum, lse = res
    canon = lambda a: np.where(np.isnan(a), f32(np.nan), a).astype(f32).view(np.uint32)
    return canon(o).tobytes() + canon(np.array([wsum, lse], f32)).tobytes()


def make_case(rng, s):
    spread = rng.choice([0.05, 0.5, 3.0, 40.0, 300.0])
    lse = (rng.normal(10.0, spread, s)).astype(f32)
    p_inf = rng.choice([0.0, 0.0, 0.1, 0.5, 0.95])
    lse[rng.random(s) < p_inf] = NEG_INF
    if rng.random() < 0.15:  # leading splits empty: P0 (and more) may add nothing
        lse[: rng.integers(1, s + 1)] = NEG_INF
    if rng.random() < 0.05:
        lse[rng.integers(s)] = f32(np.nan)
    if rng.random() < 0.03:
        lse[:] = NEG_INF
    o = (rng.normal(0, 1, (s, D)) * 10.0 ** rng.uniform(-3, 3)).astype(f32)
    o[rng.random((s, D)) < 0.01] = f32(-0.0)
    o[lse == NEG_INF] = f32(np.nan)  # unwritten
    return lse, o


def extend(lse, o, M):  # the element's rows in a batch of max_splits M: -inf, unwritten
    s = len(lse)
    return (np.concatenate([lse, np.full(M - s, NEG_INF, f32)]),
            np.concatenate([o, np.full((M - s, D), np.nan, f32)]))


def reference(lse, o):
    ok = lse != NEG_INF
    if np.isnan(lse).any():
        return "nan"
    if not ok.any():
        return "empty"
    l64 = lse[ok].astype(f64)
    w = np.exp2(l64 - l64.max())
    return (w @ o[ok].astype(f64)) / w.sum(), (l64.max() + np.log2(w.sum())) * np.log(2), w


def check_reference(lse, o, res):
    ref, (O, wsum, L) = reference(lse, o), res
    if ref == "nan":
        return np.isnan(O).all() and np.isnan(L)
    if ref == "empty":
        return (O == 0).all() and L == NEG_INF and wsum == 0
    o64, l64, w = ref
    scale = np.abs(o[lse != NEG_INF]).max()
    return (np.abs(O - o64) <= 3e-6 * len(w) ** 0.5 * scale + 1e-30).all() and \
        abs(L - l64) <= 1e-5 * max(1.0, abs(l64))


def main():
    n_random = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    kinds = [("rk", 1), ("rk", 2), ("rk", 4), ("sp", 1), ("sp", 2), ("sp", 4)]
    lo = {("rk", 1): 1, ("rk", 2): 9, ("rk", 4): 17, ("sp", 1): 9, ("sp", 2): 33, ("sp", 4): 65}
    # launch choices and the shared-memory hand-over
    for W in (32, 64):
        for M in range(1, 400):
            for rows in (1, 16, 48, 64, 128, 129, 256, 257, 4096):
                launch(M, rows, W)
        combine = (PARTS - 1) * W * (16 + 4)
        assert ((PARTS - 2) * W + W - 1) * 16 + 16 <= (PARTS - 1) * W * 16  # part_acc
        assert (PARTS - 1) * W * 16 + ((PARTS - 2) * W + W) * 4 <= combine  # part_w
    counts_ = dict(cases=0, runs=0, mismatch=0, ref_fail=0, seq_lse_differs=0, seq_o_differs=0,
                   seq_compared=0, nan_cases=0, empty_cases=0)
    sizes = list(range(1, 301)) + list(rng.integers(1, 301, n_random))
    for s in sizes:
        lse, o = make_case(rng, int(s))
        counts_["cases"] += 1
        counts_["nan_cases"] += bool(np.isnan(lse).any())
        counts_["empty_cases"] += bool((lse == NEG_INF).all())
        for W in (32, 64) if s <= 140 or rng.random() < 0.3 else (32,):
            results = []
            for kind in kinds:
                if cap(kind) < s:
                    continue
                Ms = {int(s)}
                hi = min(cap(kind), s + 140)
                if max(s, lo[kind]) <= hi:
                    Ms.add(int(rng.integers(max(s, lo[kind]), hi + 1)))
                for M in Ms:
                    res = run_kernel(kind, W, *extend(lse, o, M))
                    counts_["runs"] += 1
                    results.append((kind, M, res))
            k0 = key(results[0][2])
            bad = [(k, M) for k, M, r in results if key(r) != k0]
            if bad:
                counts_["mismatch"] += 1
                print("MISMATCH s=%d W=%d vs %s: %s" % (s, W, results[0][:2], bad))
            if not check_reference(lse, o, results[0][2]):
                counts_["ref_fail"] += 1
                print("REFERENCE s=%d W=%d" % (s, W))
            if W == 32 and s > CHUNK and not np.isnan(lse).any() and (lse != NEG_INF).any():
                seq = sequential(lse, np.nan_to_num(o))
                counts_["seq_compared"] += 1
                counts_["seq_lse_differs"] += (seq[2].view(np.uint32) !=
                                               results[0][2][2].view(np.uint32))
                counts_["seq_o_differs"] += seq[0].tobytes() != results[0][2][0].tobytes()
    print(counts_)
    assert counts_["mismatch"] == 0 and counts_["ref_fail"] == 0
    print("ok: every kernel bitwise the same, all close to the float64 reference")


if __name__ == "__main__":
    main()
